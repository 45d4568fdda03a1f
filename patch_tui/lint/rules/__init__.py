"""Lint rules by family, one module per rule or small group of rules, each with its docs.

A rule is a `Rule` object bound to its code (codes are a public interface: never renumber) and a
check function whose docstring is the rule's documentation: what it catches, then "Why:" and
"Fix:" paragraphs (docs/rules.md and `patch-tui rules CODE` are made from it). The registry
(lint/registry.py) imports every module here and registers the rules it defines, so adding a
rule is writing it in the module of its family; nothing else needs to name it.

- structure/  the file's shape: markers, YAML, code above the frontmatter (PT001-PT003, PT026)
- manifest/   the manifest's fields (PT004, PT010-PT025)
- body/       the Python body against the manifest (PT030-PT049)
- text/       the texts people and agents read (PT050-PT051)
"""
