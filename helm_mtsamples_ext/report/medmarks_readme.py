"""What a Medmarks export can rank, said where its reader looks: ``medmarks/README.md``, report.md and stderr.

Why: `medarc-eval winrate` over a panel with one model prints a table of dashes (``simple/model1 | - | - | 0``)
and no word why, and pointed at ``medmarks/`` (which holds panels, not files) it stops with a traceback advising
`medarc-eval process`. So the export names the directory to give it, one per panel, and a panel with fewer than
two models to rank (control runs are not ranked) gets one line saying so and how to add models.

Pure: names in, text out. Model and panel names come from run names (data): the lines are plain text, escaped by
whoever writes them into markdown (``outside_text.markdown``) or onto a terminal (``outside_text.terminal``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from helm_mtsamples_ext.common.outside_text import markdown

README_NAME = "README.md"
EXPORT_TABLE = "medmarks_export"
"""The report's tables key (cli.py) of the export's panels, which report.md's Medmarks section reads (render.py)."""
_EXPORT_DIR = "medmarks"  # medmarks_export.EXPORT_DIR (which imports this module)


def winrate_command(directory: str) -> str:
    """The command that ranks one panel, run from the report directory."""
    return f"medarc-eval winrate --processed-dir {_EXPORT_DIR}/{directory}"


def rank_line(panel: str, models: Sequence[str]) -> str | None:
    """One line when the panel has fewer than two models to rank: what `medarc-eval winrate` will show, and how to
    add models; None when it can rank them."""
    if len(models) >= 2:
        return None
    how = (
        "run more models with this panel's judges (helm-run ... --suite <the same suite>) and export again; "
        "a model judged elsewhere joins as a parquet in Medmarks' format (docs/report.md, Export for Medmarks)"
    )
    if not models:
        return f"Medmarks export: panel {panel} has no model to rank (only control runs, which are not ranked): {how}"
    return (
        f"Medmarks export: panel {panel} has one model to rank ({models[0]}) and medarc-eval winrate needs two "
        f"(it shows dashes): {how}"
    )


def rank_lines(panels: Mapping[str, Sequence[str]]) -> list[str]:
    """Each panel's line, for the panels that cannot be ranked (stderr)."""
    return [line for panel, models in panels.items() if (line := rank_line(panel, models)) is not None]


def readme_text(panels: Mapping[str, tuple[str, Sequence[str]]]) -> str:
    """``medmarks/README.md``: per panel (name -> (directory, models)), the command that ranks it and, when it
    cannot, why; which directory to give medarc-eval comes first."""
    lines = [
        "# Medmarks export",
        "",
        "One directory per judge panel (rewards of different panels are never ranked together). Rank a panel from "
        "the report directory with medarc-eval (medarc-verifiers, in a venv of its own), pointing it at that "
        f"panel's directory, not at {_EXPORT_DIR}/ itself: {_EXPORT_DIR}/ holds no env_index.json, and "
        "medarc-eval stops there with a traceback advising medarc-eval process.",
        "",
    ]
    for panel, (directory, models) in panels.items():
        lines += [f"## Panel {markdown(panel)}", "", "```bash", winrate_command(directory), "```", ""]
        lines += [f"- {markdown(model)}" for model in models]
        line = rank_line(panel, models)
        lines += ["", *([markdown(line), ""] if line else [])]
    return "\n".join(lines)


def export_summary(panels: Mapping[str, Sequence[str]], directories: Mapping[str, str]) -> pd.DataFrame:
    """The report's table of the export (``EXPORT_TABLE``): per panel, its directory under ``medmarks/`` (none for a
    panel of control runs only: nothing of it is exported), its models and its line when it cannot be ranked."""
    return pd.DataFrame(
        [
            {
                "panel": panel,
                "directory": directories.get(panel),
                "models": len(models),
                "line": rank_line(panel, models),
            }
            for panel, models in panels.items()
        ],
        columns=["panel", "directory", "models", "line"],
    )


def export_markdown(summary: pd.DataFrame | None) -> list[str]:
    """report.md's "Medmarks export" section: the command per panel, and the line of each panel it cannot rank."""
    if summary is None:
        return []
    lines = ["## Medmarks export", ""]
    for row in summary.itertuples(index=False):
        if isinstance(row.directory, str):
            lines.append(f"- Panel {markdown(str(row.panel))}: `{winrate_command(row.directory)}`")
        if isinstance(row.line, str):
            lines.append(f"- {markdown(row.line)}")
    return [*lines, "", f"Every panel's directory and models: `{_EXPORT_DIR}/{README_NAME}`.", ""]


__all__ = [
    "EXPORT_TABLE",
    "README_NAME",
    "export_markdown",
    "export_summary",
    "rank_line",
    "rank_lines",
    "readme_text",
    "winrate_command",
]
