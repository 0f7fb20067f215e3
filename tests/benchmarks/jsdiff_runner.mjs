// Times jsdiff's createTwoFilesPatch on the inputs written by bench_diff.py.
//
//   node jsdiff_runner.mjs INPUT.json OUTPUT.json CACHE_DIR
//
// INPUT.json:  {"runs": N, "cases": [{"key", "path", "oldText" (string or null), "newText"}]}
// OUTPUT.json: {"diff_version", "node", "results": {key: {"ms": median, "sha256": hex or null}}}
//
// CACHE_DIR is the npm --prefix folder holding node_modules/diff (diff@8.0.3). The
// package's ESM entry is imported from there by file URL, so no global install is used.

import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const [inputPath, outputPath, cacheDir] = process.argv.slice(2);
if (!inputPath || !outputPath || !cacheDir) {
  console.error('usage: node jsdiff_runner.mjs INPUT.json OUTPUT.json CACHE_DIR');
  process.exit(2);
}

const packageDir = join(cacheDir, 'node_modules', 'diff');
const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
const { createTwoFilesPatch, FILE_HEADERS_ONLY } = await import(
  pathToFileURL(join(packageDir, 'libesm', 'index.js')).href
);

// The call our engine reproduces: a null oldText is a new file (/dev/null header, empty old
// side), and the edit cap applies only when both sides have text.
function patch({ path, oldText, newText }) {
  const options = { context: 3, headerOptions: FILE_HEADERS_ONLY };
  if (oldText !== null && oldText !== '' && newText !== '') {
    options.maxEditLength = 1000;
  }
  const oldName = oldText === null ? '/dev/null' : path;
  return createTwoFilesPatch(oldName, path, oldText ?? '', newText, undefined, undefined, options);
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const { runs, cases } = JSON.parse(readFileSync(inputPath, 'utf8'));
const results = {};
for (const item of cases) {
  const output = patch(item); // warm-up; its output is the one hashed
  const times = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    patch(item);
    times.push(performance.now() - start);
  }
  results[item.key] = {
    ms: median(times),
    sha256: output === undefined ? null : createHash('sha256').update(output, 'utf8').digest('hex'),
  };
}

writeFileSync(
  outputPath,
  JSON.stringify({ diff_version: version, node: process.version, results }, null, 2),
);
