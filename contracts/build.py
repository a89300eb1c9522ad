"""Compile contracts/*.sol with the pinned solcjs into contracts/build/<Name>.json (ABI + bytecode).

Run by hand (`make contracts`) after editing a contract; the JSON is committed so Python never
needs node at runtime.
"""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONTRACTS = ROOT / "contracts"
SOLCJS = ROOT / "node_modules" / ".bin" / "solcjs"


def main() -> int:
    sources = {path.name: {"content": path.read_text()} for path in CONTRACTS.glob("*.sol")}
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
