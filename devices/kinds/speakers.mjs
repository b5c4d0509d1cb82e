// A speaker (device type 0x0022): Matter's Speaker has no on/off of its own - its OnOff
// is its mute (off = muted) and its LevelControl its volume (1-254). matter.js's
// SpeakerDevice carries both servers as they are; nothing here is re-implemented.
import { SpeakerDevice } from "@matter/main/devices/speaker";

export const SPEAKER_KINDS = {
    speaker: () => ({
        device: SpeakerDevice,
        state: {
            onOff: { onOff: true },
            // Volume 50 % (level 127 of 1-254); executeIfOff so a muted speaker's volume
            // can still be set (LevelControl 1.6.6.9, Options bit 0).
            levelControl: { currentLevel: 127, minLevel: 1, maxLevel: 254, options: { executeIfOff: true } },
        },
        watched: [["onOff", "onOff"], ["levelControl", "currentLevel"]],
        // SIGUSR1: the speaker's own mute button.
        async local(endpoint) {
            const value = !endpoint.state.onOff.onOff;
            await endpoint.set({ onOff: { onOff: value } });
            return ["onOff", "onOff", value];
        },
    }),
};
