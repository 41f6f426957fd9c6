"""What every cost figure is measured on: the CPU kind and the thread count, from a folder's manifest.json (a partition
design's: its first partition's), so a page or table never shows a latency or a throughput without its machine."""
from __future__ import annotations

from pathlib import Path

from comparisons.report.i18n import text
from comparisons.run_folder.open_folder import open_folder
from comparisons.run_folder.records import Manifest


def measured_on(manifest: Manifest) -> str | None:
    """'AMD EPYC, 2 threads': the CPU kind and thread count the cost figures were measured with."""
    cpu, threads = manifest.machine.get("cpu"), manifest.threads
    if not cpu and not threads:
        return None
    return ", ".join(part for part in (cpu, f"{threads} threads" if threads else None) if part)


def folder_manifest(out) -> Manifest:
    """manifest.json of a single-split folder, or of a partition design's first partition (empty when none)."""

    opened = open_folder(Path(out))
    found = opened.manifests() if opened is not None else []
    return found[0] if found else Manifest.from_dict({})


def costs_note(out, lang: str) -> str:
    """' Costs measured on AMD EPYC, 2 threads.' ('' when the folder does not say)."""
    return costs_note_of(folder_manifest(out), lang)


def costs_note_of(manifest: Manifest, lang: str) -> str:
    """costs_note from a manifest already read."""
    machine = measured_on(manifest)
    return text(f" Costs measured on {machine}.", f"成本测量于 {machine}。", lang) if machine else ""
