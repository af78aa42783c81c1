// Each build directory says its own module format, so Node reads dist/esm as ESM and dist/cjs as
// CommonJS whatever the package's own "type" is.
const fs = require('node:fs');
const path = require('node:path');
const dist = path.join(__dirname, '..', 'dist');
fs.writeFileSync(path.join(dist, 'esm', 'package.json'), '{ "type": "module" }\n');
fs.writeFileSync(path.join(dist, 'cjs', 'package.json'), '{ "type": "commonjs" }\n');
