# ---
# name: edge_tool
# version: !!str 1.0.0
# description: An edge case for the runtime.
# inputs:
#   - name: text
#     type: string
#     description: ! The text.
#     required: !!bool false
#     default: !!str 5
# outputs:
#   type: object
# capabilities:
#   network: false
#   filesystem: none
#   human_confirm: !!bool false
# runtime:
#   language: python
#   python_version: !!str 3.12
#   packages: []
# ---

import json
import sys


def main(text: str) -> dict:
    return {"text": text}


if __name__ == "__main__":
    print(json.dumps(main(**json.loads(sys.stdin.read()))))

