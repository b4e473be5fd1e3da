"""Where plots go, and which existing files a plot may replace.

A plot file is written with a title in its metadata ("Clade lineage: <run>",
"Clade progress: ..."). An existing file of the same name is replaced only if
it carries that mark (we wrote it: plots are regenerated at will); any other
file is left alone unless the user says `--force`.
"""

from __future__ import annotations

from pathlib import Path

MARK = "Clade {kind}"  # the start of the metadata title of every plot we write
_HEAD_BYTES = 65536  # PNG text chunks and SVG metadata both sit near the start


class PlotPathError(Exception):
    """A plot would overwrite a file we did not write (or cannot be written); one line."""


def plot_title(kind: str, what: str) -> str:
    return f"{MARK.format(kind=kind)}: {what}"


def is_ours(path: Path, kind: str) -> bool:
    """Whether `path` is a plot of this kind that we wrote (its metadata carries our mark)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(_HEAD_BYTES)
    except OSError:
        return False
    return MARK.format(kind=kind).encode() in head


def plan_outputs(out_dir: Path, stem: str, formats: list[str], kind: str, force: bool) -> list[tuple[Path, bool]]:
    """[(path, replaces_ours)] for each format; PlotPathError if one would overwrite a file that is
    not ours (without `force`) or the folder cannot be made."""
    if out_dir.exists() and not out_dir.is_dir():
        raise PlotPathError(f"--out {out_dir} is a file, not a folder")
    planned = []
    for fmt in formats:
        path = out_dir / f"{stem}.{fmt}"
        exists = path.exists()
        if exists and not force and not is_ours(path, kind):
            raise PlotPathError(
                f"{path} exists and is not a plot this script wrote; use --force to replace it, or --out another folder"
            )
        planned.append((path, exists))
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PlotPathError(f"cannot make {out_dir}: {exc.strerror or exc}") from None
    return planned


def parse_formats(text: str) -> list[str]:
    formats = [f.strip().lower().lstrip(".") for f in text.split(",") if f.strip()]
    bad = [f for f in formats if f not in ("png", "svg")]
    if bad or not formats:
        raise PlotPathError(f"--formats takes png, svg or png,svg, not {text!r}")
    return list(dict.fromkeys(formats))


def save_figure(fig, title: str, outputs) -> list[Path]:
    """Write a drawn matplotlib figure to each output (.png or .svg, by suffix) with `title` in its metadata
    (the mark `is_ours` reads; an SVG without a date, so a redraw is byte-stable), then close it."""
    import matplotlib.pyplot as plt

    written = []
    try:
        for out in outputs:
            out = Path(out)
            fmt = out.suffix.lower().lstrip(".")
            if fmt not in ("png", "svg"):
                raise ValueError(f"unknown plot format {out.suffix!r} (png or svg)")
            extra = {"dpi": 120} if fmt == "png" else {}
            fig.savefig(out, format=fmt, metadata={"Title": title, **({"Date": None} if fmt == "svg" else {})}, **extra)
            written.append(out)
    finally:
        plt.close(fig)
    return written


def needs_viz() -> str:
    """The line for plots without matplotlib, naming the extra as this Clade was installed."""
    from engine.install import install_extra

    return f"plots need matplotlib: {install_extra('viz')}"
