#!/usr/bin/env node
// A committed entry point, so npm links the bin at install time, before dist/ is built.
require('../dist/cjs/cli/bin.js');
