"""Compile contracts/*.sol and the npm contracts below with the pinned solcjs into
contracts/build/<Name>.json (ABI + bytecode).

Run by hand (`make contracts`) after editing a contract; the JSON is committed so Python never
needs node at runtime. npm sources are read from node_modules, never copied into the repo.
"""

import json
import posixpath
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONTRACTS = ROOT / "contracts"
NODE_MODULES = ROOT / "node_modules"
SOLCJS = NODE_MODULES / ".bin" / "solcjs"
# Chainlink's own test aggregator: the devnet's price feeds and the feed tests deploy it.
NPM_CONTRACTS = ["@chainlink/contracts/src/v0.8/tests/MockV3Aggregator.sol"]
IMPORT = re.compile(r'^\s*import\s+(?:[^"\']*\s+from\s+)?["\']([^"\']+)["\']', re.MULTILINE)


def _with_imports(sources: dict[str, dict]) -> dict[str, dict]:
    """`sources` plus every file they import, keyed by the unit name solc resolves: the CLI of
    solcjs has no import callback, so the standard-json request must carry them all."""
    pending = list(sources)
    while pending:
        unit = pending.pop()
        for target in IMPORT.findall(sources[unit]["content"]):
            if target.startswith("."):
                target = posixpath.normpath(posixpath.join(posixpath.dirname(unit), target))
            if target not in sources:
                sources[target] = {"content": (NODE_MODULES / target).read_text()}
                pending.append(target)
    return sources


def main() -> int:
    sources = {path.name: {"content": path.read_text()} for path in CONTRACTS.glob("*.sol")}
    sources |= {unit: {"content": (NODE_MODULES / unit).read_text()} for unit in NPM_CONTRACTS}
    sources = _with_imports(sources)
    request = {
        "language": "Solidity",
        "sources": sources,
        "settings": {
            "optimizer": {"enabled": True, "runs": 200},
            "evmVersion": "cancun",
            "outputSelection": {"*": {"*": ["abi", "evm.bytecode.object"]}},
        },
    }
    result = subprocess.run(
        [str(SOLCJS), "--standard-json"],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        check=True,
    )
    # solcjs may print warnings before the JSON document.
    output = json.loads(result.stdout[result.stdout.index("{") :])
    errors = [e for e in output.get("errors", []) if e["severity"] == "error"]
    for error in output.get("errors", []):
        print(error["formattedMessage"], file=sys.stderr)
    if errors:
        return 1
    build = CONTRACTS / "build"
    build.mkdir(exist_ok=True)
    for file_contracts in output["contracts"].values():
        for name, compiled in file_contracts.items():
            if not compiled["evm"]["bytecode"]["object"]:
                continue  # an interface or abstract contract: nothing to deploy
            artifact = {
                "contractName": name,
                "compiler": "solc 0.8.28 (solcjs)",
                "abi": compiled["abi"],
                "bytecode": "0x" + compiled["evm"]["bytecode"]["object"],
            }
            (build / f"{name}.json").write_text(json.dumps(artifact, indent=2) + "\n")
            print(f"contracts/build/{name}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
