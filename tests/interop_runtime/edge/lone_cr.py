# ---
# name: edge_tool
# version: 1.0.0
# description: An edge case# version: 9.9.9# for the runtime.
# inputs:
#   - name: text
#     type: string
#     description: The text.
# outputs:
#   type: object
# capabilities:
#   network: false
#   filesystem: none
#   human_confirm: false
# runtime:
#   language: python
#   python_version: "3.12"
#   packages: []
# ---

import json
import sys


def main(text: str) -> dict:
    return {"text": text}


if __name__ == "__main__":
    print(json.dumps(main(**json.loads(sys.stdin.read()))))

