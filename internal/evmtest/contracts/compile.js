// Compiles Token.sol with solc-js and writes Token.abi and Token.bin into
// the folder named by the first argument (this folder when there is none).
//
// The compiler is the solc npm package at PREDICTKIT_SOLCJS (its folder,
// node_modules/solc), or else where .ci/run installs it:
// ${PREDICTKIT_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/predictkit-ci}/solc-VERSION/node_modules/solc.
// The version and the settings are fixed here so that the committed files
// can be rebuilt byte for byte, which TestTokenBytecodeIsCurrent does.
"use strict";

const fs = require("fs");
const os = require("os");
const path = require("path");

const version = "0.8.37";
// cancun: an EVM every chain we watch and go-ethereum's simulated backend
// run, so the bytecode does not depend on the compiler's default.
const settings = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: "cancun",
  outputSelection: { "Token.sol": { Token: ["abi", "evm.bytecode.object"] } },
};

function solcPath() {
  if (process.env.PREDICTKIT_SOLCJS) return process.env.PREDICTKIT_SOLCJS;
  const cache =
    process.env.PREDICTKIT_CI_CACHE ||
    path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "predictkit-ci");
  return path.join(cache, "solc-" + version, "node_modules", "solc");
}

function main() {
  const here = __dirname;
  const out = process.argv[2] || here;
  const where = solcPath();
  if (!fs.existsSync(path.join(where, "package.json"))) {
    fail(
      `no solc-js at ${where}: install it with\n` +
        `  npm install --prefix ${path.dirname(path.dirname(where))} solc@${version}\n` +
        `or set PREDICTKIT_SOLCJS to its node_modules/solc folder`,
    );
  }
  const solc = require(where);
  if (!solc.version().startsWith(version + "+")) {
    fail(`solc-js at ${where} is ${solc.version()}, want ${version}`);
  }
  const input = {
    language: "Solidity",
    sources: { "Token.sol": { content: fs.readFileSync(path.join(here, "Token.sol"), "utf8") } },
    settings,
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input)));
  const problems = (output.errors || []).filter((e) => e.severity === "error" || e.type === "Warning");
  if (problems.length > 0) {
    fail(problems.map((e) => e.formattedMessage).join("\n"));
  }
  const token = output.contracts["Token.sol"].Token;
  fs.writeFileSync(path.join(out, "Token.abi"), JSON.stringify(token.abi, null, 1) + "\n");
  fs.writeFileSync(path.join(out, "Token.bin"), token.evm.bytecode.object + "\n");
}

function fail(message) {
  process.stderr.write(message + "\n");
  process.exit(1);
}

main();
