# ---
# name: slugify
# version: 1.0.0
# description: Turn a title into a URL slug like "hello-world".
# inputs:
#   - name: text
#     type: string
#     description: The title or phrase to turn into a slug.
#     tainted_ok: true
#   - name: separator
#     type: string
#     description: The character placed between words.
#     required: false
#     default: '-'
#   - name: max_length
#     type: integer
#     description: The longest slug to return, cut at a word boundary.
#     required: false
#     default: 80
# outputs:
#   type: string
# capabilities:
#   network: false
#   filesystem: none
#   human_confirm: false
# runtime:
#   language: python
#   python_version: '3.12'
#   packages: []
# ---
import json
import re
import sys
import unicodedata


def main(text: str, separator: str = "-", max_length: int = 80) -> str:
    # NFKD splits "é" into "e" plus an accent, which the ASCII encode then drops.
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    slug = ""
    for word in words:
        candidate = f"{slug}{separator}{word}" if slug else word
        if len(candidate) > max_length:
            break
        slug = candidate
    if not slug and words:
        slug = words[0][:max_length]
    return slug


if __name__ == "__main__":
    args = json.loads(sys.stdin.read())
    print(json.dumps(main(**args)))
