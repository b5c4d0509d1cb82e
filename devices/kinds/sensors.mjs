// Sensor kinds: each reads a value the test can check in the controller's node data.
// Units are the Matter spec's: 0.01 °C, 0.01 %RH, lux as 10000*log10(lux)+1, 0.1 kPa,
// 0.1 m³/h, ppm / µg/m³ as floats.
import { WaterLeakDetectorDevice } from "@matter/main/devices/water-leak-detector";
import { WaterFreezeDetectorDevice } from "@matter/main/devices/water-freeze-detector";
import { RainSensorDevice } from "@matter/main/devices/rain-sensor";
import { ContactSensorDevice } from "@matter/main/devices/contact-sensor";
import { OccupancySensorDevice } from "@matter/main/devices/occupancy-sensor";
import { LightSensorDevice } from "@matter/main/devices/light-sensor";
import { PressureSensorDevice } from "@matter/main/devices/pressure-sensor";
import { FlowSensorDevice } from "@matter/main/devices/flow-sensor";
import { HumiditySensorDevice } from "@matter/main/devices/humidity-sensor";
import { TemperatureSensorDevice } from "@matter/main/devices/temperature-sensor";
import { AirQualitySensorDevice } from "@matter/main/devices/air-quality-sensor";
import { SmokeCoAlarmDevice } from "@matter/main/devices/smoke-co-alarm";
import { OccupancySensingServer } from "@matter/main/behaviors/occupancy-sensing";
import { AirQualityServer } from "@matter/main/behaviors/air-quality";
import { CarbonDioxideConcentrationMeasurementServer } from "@matter/main/behaviors/carbon-dioxide-concentration-measurement";
import { Pm25ConcentrationMeasurementServer } from "@matter/main/behaviors/pm25-concentration-measurement";
import { SmokeCoAlarmServer } from "@matter/main/behaviors/smoke-co-alarm";
import { TemperatureMeasurementServer } from "@matter/main/behaviors/temperature-measurement";
import { RelativeHumidityMeasurementServer } from "@matter/main/behaviors/relative-humidity-measurement";

// A BooleanState sensor: SIGUSR1 flips stateValue (a leak starts, a door opens ...).
function booleanKind(device) {
    return {
        device,
        state: { booleanState: { stateValue: false } },
        watched: [["booleanState", "stateValue"]],
        async local(endpoint) {
            const value = !endpoint.state.booleanState.stateValue;
            await endpoint.set({ booleanState: { stateValue: value } });
            return ["booleanState", "stateValue", value];
        },
    };
}

// A measurement sensor: SIGUSR1 raises measuredValue by `step`.
function measuredKind(device, cluster, measuredValue, extra, step) {
    return {
        device,
        state: { [cluster]: { measuredValue, ...extra } },
        watched: [[cluster, "measuredValue"]],
        async local(endpoint) {
            const value = endpoint.state[cluster].measuredValue + step;
            await endpoint.set({ [cluster]: { measuredValue: value } });
            return [cluster, "measuredValue", value];
        },
    };
}

export const SENSOR_KINDS = {
    leak: () => booleanKind(WaterLeakDetectorDevice),
    freeze: () => booleanKind(WaterFreezeDetectorDevice),
    rain: () => booleanKind(RainSensorDevice),
    contact: () => ({ ...booleanKind(ContactSensorDevice), state: { booleanState: { stateValue: true } } }),
    occupancy: () => ({
        device: OccupancySensorDevice.with(OccupancySensingServer.with("PassiveInfrared")),
        state: {
            occupancySensing: {
                occupancy: { occupied: false },
                occupancySensorType: 0, // PIR
                occupancySensorTypeBitmap: { pir: true },
            },
        },
        watched: [["occupancySensing", "occupancy"]],
        async local(endpoint) {
            const value = { occupied: !endpoint.state.occupancySensing.occupancy.occupied };
            await endpoint.set({ occupancySensing: { occupancy: value } });
            return ["occupancySensing", "occupancy", value];
        },
    }),
    // 10000*log10(lux)+1: 20001 is 100 lux.
    illuminance: () => measuredKind(LightSensorDevice, "illuminanceMeasurement", 20001,
        { minMeasuredValue: 1, maxMeasuredValue: 50001 }, 1000),
    // 0.1 kPa: 1013 is 101.3 kPa.
    pressure: () => measuredKind(PressureSensorDevice, "pressureMeasurement", 1013,
        { minMeasuredValue: 300, maxMeasuredValue: 1100 }, 1),
    // 0.1 m³/h: 25 is 2.5 m³/h.
    flow: () => measuredKind(FlowSensorDevice, "flowMeasurement", 25,
        { minMeasuredValue: 0, maxMeasuredValue: 1000 }, 5),
    // 0.01 %RH: 4550 is 45.5 %.
    humidity: () => measuredKind(HumiditySensorDevice, "relativeHumidityMeasurement", 4550,
        { minMeasuredValue: 0, maxMeasuredValue: 10000 }, 100),
    // 0.01 °C: 2135 is 21.35 °C.
    temperature: () => measuredKind(TemperatureSensorDevice, "temperatureMeasurement", 2135,
        { minMeasuredValue: -4000, maxMeasuredValue: 8500 }, 50),
    // Air quality with temperature, humidity, CO2 (ppm) and PM2.5 (µg/m³) on one endpoint.
    "air-quality": () => ({
        device: AirQualitySensorDevice.with(
            AirQualityServer.with("Fair", "Moderate", "VeryPoor", "ExtremelyPoor"),
            TemperatureMeasurementServer,
            RelativeHumidityMeasurementServer,
            CarbonDioxideConcentrationMeasurementServer.with("NumericMeasurement"),
            Pm25ConcentrationMeasurementServer.with("NumericMeasurement"),
        ),
        state: {
            airQuality: { airQuality: 2 }, // Fair
            temperatureMeasurement: { measuredValue: 2210, minMeasuredValue: -1000, maxMeasuredValue: 5000 },
            relativeHumidityMeasurement: { measuredValue: 4100, minMeasuredValue: 0, maxMeasuredValue: 10000 },
            carbonDioxideConcentrationMeasurement: {
                measuredValue: 612, minMeasuredValue: 0, maxMeasuredValue: 5000,
                measurementUnit: 0, measurementMedium: 0, // ppm, air
            },
            pm25ConcentrationMeasurement: {
                measuredValue: 8, minMeasuredValue: 0, maxMeasuredValue: 1000,
                measurementUnit: 4, measurementMedium: 0, // µg/m³, air
            },
        },
        watched: [["airQuality", "airQuality"], ["carbonDioxideConcentrationMeasurement", "measuredValue"]],
        async local(endpoint) {
            const value = endpoint.state.carbonDioxideConcentrationMeasurement.measuredValue + 400;
            await endpoint.set({ carbonDioxideConcentrationMeasurement: { measuredValue: value } });
            return ["carbonDioxideConcentrationMeasurement", "measuredValue", value];
        },
    }),
    // Smoke and CO alarm; SIGUSR1 raises the smoke state to Critical (2) and back.
    "smoke-co": () => ({
        device: SmokeCoAlarmDevice.with(SmokeCoAlarmServer.with("SmokeAlarm", "CoAlarm")),
        state: {
            smokeCoAlarm: {
                expressedState: 0, smokeState: 0, coState: 0, batteryAlert: 0,
                testInProgress: false, hardwareFaultAlert: false, endOfServiceAlert: 0,
            },
        },
        watched: [["smokeCoAlarm", "smokeState"], ["smokeCoAlarm", "expressedState"]],
        async local(endpoint) {
            const value = endpoint.state.smokeCoAlarm.smokeState === 0 ? 2 : 0;
            await endpoint.set({ smokeCoAlarm: { smokeState: value, expressedState: value ? 1 : 0 } });
            return ["smokeCoAlarm", "smokeState", value];
        },
    }),
};
