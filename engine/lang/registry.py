"""The languages Clade knows besides Python: a file's extension -> how to read, fence and parse it.

Each entry names its tree-sitter grammar package (a wheel that ships the
compiled grammar, so parsing works offline; `tree-sitter-language-pack`
downloads grammars at run time and is not used), the tags a model may put on
its code fences, and the comment syntax EVOLVE-BLOCK markers are written in
(ShinkaEvolve and OpenEvolve write `// EVOLVE-BLOCK-START` in C-like
languages, `! EVOLVE-BLOCK-START` in Fortran, `# EVOLVE-BLOCK-START` in Julia).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath


@dataclass(frozen=True)
class Language:
    name: str
    extensions: tuple[str, ...]
    fences: tuple[str, ...]  # code-fence tags a model may use for it (the first is ours)
    line_comment: str  # what starts a line comment
    block_comment: tuple[str, str] | None  # (open, close), or None when the language has none
    grammar: str  # the tree-sitter grammar's Python module


LANGUAGES: tuple[Language, ...] = (
    Language("c", (".c", ".h"), ("c",), "//", ("/*", "*/"), "tree_sitter_c"),
    Language(
        "cpp",
        (".cpp", ".cc", ".cxx", ".hpp", ".cu"),
        ("cpp", "c++", "cxx", "cuda"),
        "//",
        ("/*", "*/"),
        "tree_sitter_cpp",
    ),
    Language("rust", (".rs",), ("rust", "rs"), "//", ("/*", "*/"), "tree_sitter_rust"),
    Language("go", (".go",), ("go", "golang"), "//", ("/*", "*/"), "tree_sitter_go"),
    Language("fortran", (".f90", ".f95", ".f03", ".f08", ".f"), ("fortran", "f90"), "!", None, "tree_sitter_fortran"),
    Language("julia", (".jl",), ("julia", "jl"), "#", ("#=", "=#"), "tree_sitter_julia"),
)


def language_of(path: str, named: str | None = None) -> Language | None:
    """The language of `path` by its extension, or the one a folder's config `named`; None for Python and
    for extensions Clade does not know."""
    if named:
        for lang in LANGUAGES:
            if named.lower() in (lang.name, *lang.fences):
                return lang
        return None
    suffix = PurePath(path).suffix.lower()
    return next((lang for lang in LANGUAGES if suffix in lang.extensions), None)


def known_names() -> str:
    return ", ".join(lang.name for lang in LANGUAGES)
