// SPDX-License-Identifier: Apache-2.0
// Runs Yosys (npm @yowasp/yosys, WebAssembly under Node.js) on files of the host's file system:
//
//   node yosys.mjs WORKDIR -- YOSYS_ARGS...
//
// Yosys sees WORKDIR's files (not its subdirectories) in its root directory and runs there; every
// file it creates or changes is written back to WORKDIR. Debian's Yosys 0.23 cannot parse
// multi-dimensional packed ports, hence this one (docs/fpga.md).
import { runYosys } from '@yowasp/yosys';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const sep = process.argv.indexOf('--');
if (sep !== 3) {
  console.error('usage: node yosys.mjs WORKDIR -- YOSYS_ARGS...');
  process.exit(2);
}
const dir = process.argv[2];
const files = {};
for (const name of readdirSync(dir)) {
  if (statSync(join(dir, name)).isFile()) files[name] = readFileSync(join(dir, name));
}
let out = {};
let code = 0;
try {
  out = await runYosys(process.argv.slice(sep + 1), files, { decodeASCII: false });
} catch (e) {
  if (e.files === undefined) throw e;  // not Yosys exiting: a bug here, with its stack
  out = e.files;
  code = e.code || 1;
}
for (const [name, data] of Object.entries(out)) {
  if (!(data instanceof Uint8Array)) continue;  // a directory
  if (files[name] === undefined || Buffer.compare(Buffer.from(files[name]), Buffer.from(data)) !== 0) {
    writeFileSync(join(dir, name), data);
  }
}
process.exit(code);
