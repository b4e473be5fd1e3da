"""Candidates in languages other than Python: which languages, how their code is parsed and marked.

`registry` names each language (extensions, fence tags, comment syntax, its
tree-sitter grammar package); `syntax` parses a candidate with tree-sitter
and says where it is broken; `markers` finds the EVOLVE-BLOCK region in the
language's own comments; `mutate` is the offline mutator's operators on the
tree (numbers, operators, statements). tree-sitter and the grammars are the `languages`
extra, imported only when a check runs.
"""
