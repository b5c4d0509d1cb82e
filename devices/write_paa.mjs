// Write the controller's PAA trust store for the virtual devices.
//
//   node write_paa.mjs DIR
//
// matter.js signs its test devices' attestation chain under the CHIP test roots that it
// ships; the controller must trust them or commissioning stops at attestation. Each
// root is written as DER and PEM. The `.version` marker tells python-matter-server its
// store is current, so it neither wipes the folder nor goes online to refresh it.
import { TestCert_PAA_FFF1_Cert, TestCert_PAA_NoVID_Cert } from "@matter/main/protocol";
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2];
if (!dir) {
    console.error("usage: node write_paa.mjs DIR");
    process.exit(2);
}
mkdirSync(dir, { recursive: true });

function writeAtomically(path, data) {
    const tmp = `${path}.tmp-${process.pid}`;
    writeFileSync(tmp, data);
    renameSync(tmp, path);
}

function pem(der) {
    const lines = Buffer.from(der).toString("base64").replace(/(.{64})/g, "$1\n").trimEnd();
    return `-----BEGIN CERTIFICATE-----\n${lines}\n-----END CERTIFICATE-----\n`;
}

const roots = { "chip-test-paa-novid": TestCert_PAA_NoVID_Cert, "chip-test-paa-fff1": TestCert_PAA_FFF1_Cert };
for (const [name, der] of Object.entries(roots)) {
    writeAtomically(join(dir, `${name}.der`), Buffer.from(der));
    writeAtomically(join(dir, `${name}.pem`), pem(der));
}
writeAtomically(join(dir, ".version"), "1\n");
console.log(JSON.stringify({ paa_dir: dir, roots: Object.keys(roots) }));
