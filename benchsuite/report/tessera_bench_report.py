#!/usr/bin/env python3
# ===- tessera_bench_report.py - HTML and markdown from bench results ----=== #
#
#   tessera_bench_report.py --out DIR RESULTS.json...
#
# Reads tessera-bench result files (JSON schema version 1, docs/bench-json.md)
# and writes DIR/index.html (self-contained: inline CSS, plots embedded as
# base64 PNG data URIs, no external resources), DIR/report.md (markdown tables
# referencing the PNG files) and the PNG plots themselves. Several input files
# are overlaid in every plot so that runs can be compared. Tested with Python
# 3.11 and matplotlib 3.6 (Debian 12; the Agg backend, no display). Documented in
# docs/bench-report.md.
#
# Exit status: 0 written; 2 an input could not be read or is not schema
# version 1, or matplotlib is missing (nothing written); 1 anything else.
#
# ===---------------------------------------------------------------------=== #

import argparse
import base64
import datetime
import html
import io
import json
import math
import os
import re
import statistics
import sys

SCHEMA_VERSION = 1
COMPILE_STAGES = ["parse", "sema", "tilePasses", "lowering", "codegen", "ptx",
                  "cubin", "tuning"]
# Resource columns shown first, in this order; other keys follow sorted.
KNOWN_RESOURCES = ["registers", "sharedBytes", "occupancy"]
RUN_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">"]
# Line styles of the runs (dashed is kept for the baselines).
RUN_LINES = ["-", ":", "-.", (0, (6, 2, 1, 2, 1, 2))]
DASH = "\u2013"  # shown where a value does not exist (e.g. a FAILED speed)


class InputError(Exception):
    """An input file that cannot be reported (exit status 2)."""


# ===---------------------------------------------------------------------=== #
# Loading
# ===---------------------------------------------------------------------=== #


def number(value):
    """A finite float, or None for anything else (bool, string, NaN, ...)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def text(value):
    return value if isinstance(value, str) else ("" if value is None
                                                 else str(value))


def string_map(value):
    if not isinstance(value, dict):
        return {}
    return {str(k): text(v) for k, v in value.items()}


def number_map(value):
    if not isinstance(value, dict):
        return {}
    out = {}
    for k, v in value.items():
        n = number(v)
        if n is not None:
            out[str(k)] = n
    return out


class Case:
    """One case of a result file, normalised. `speed` is True only for a
    PASSED case with a positive median: FAILED and SKIPPED cases never carry
    a speed, whatever the file holds."""

    def __init__(self, raw, run):
        self.run = run
        self.suite = text(raw.get("suite")) or "(no suite)"
        self.kernel = text(raw.get("kernel"))
        self.name = text(raw.get("name"))
        self.device = text(raw.get("device"))
        self.precision = text(raw.get("precision"))
        self.params = string_map(raw.get("params"))
        self.config = string_map(raw.get("config"))
        self.config_source = text(raw.get("configSource"))
        if raw.get("skipped") is True:
            self.status = "SKIPPED"
            self.reason = text(raw.get("skipReason")) or text(
                raw.get("failure"))
        elif raw.get("passed") is True:
            self.status = "PASSED"
            self.reason = ""
        else:
            self.status = "FAILED"
            self.reason = text(raw.get("failure")) or "(no failure text)"
        self.max_abs = number(raw.get("maxAbsError"))
        self.max_rel = number(raw.get("maxRelError"))
        work = raw.get("work") if isinstance(raw.get("work"), dict) else {}
        self.flops = number(work.get("flops")) or 0.0
        self.bytes = number(work.get("bytes")) or 0.0
        self.compute_path = text(raw.get("computePath"))
        compile_ms = number_map(raw.get("compileMs"))
        self.compile = {s: max(0.0, compile_ms.get(s, 0.0))
                        for s in COMPILE_STAGES}
        self.resources = number_map(raw.get("resources"))
        self.resources_arch = text(raw.get("resourcesArch"))
        self.resources_note = text(raw.get("resourcesNote"))
        self.variant = ""  # set per suite by assign_variants()

        stats = number_map(raw.get("stats"))
        median = stats.get("median")
        self.speed = (self.status == "PASSED" and median is not None
                      and median > 0)
        self.stats = stats if self.speed else {}
        self.stop_reason = text(raw.get("stopReason")) if self.speed else ""
        self.tflops = self.gbs = self.efficiency = None
        if self.speed:
            self.tflops = number(raw.get("tflops")) or 0.0
            self.gbs = number(raw.get("gbs")) or 0.0
            self.efficiency = number(raw.get("rooflineEfficiency"))

        self.baseline = None
        base = raw.get("baseline")
        if isinstance(base, dict):
            bstats = number_map(base.get("stats"))
            self.baseline = {
                "name": text(base.get("name")) or "baseline",
                "median": bstats.get("median"),
                "speedup": number(base.get("speedup")) if self.speed else None,
            }

    @property
    def median(self):
        return self.stats.get("median")

    def series_key(self):
        return (self.kernel or self.name, self.precision, self.variant)

    def compile_total(self):
        return sum(self.compile[s] for s in COMPILE_STAGES if s != "tuning")


def assign_variants(cases):
    """Sets `variant` of the cases of one suite: the parameters that are not
    sizes, i.e. whose values are not all integers or are all 0 or 1 (flags
    such as causal or transA), as far as they differ within the suite.
    A flag reads as its name when 1 and is left out when 0; other knobs read
    as key=value."""
    values = {}
    for c in cases:
        for k, v in c.params.items():
            values.setdefault(k, set()).add(v)
    knobs = [k for k, vs in values.items() if len(vs) > 1 and (
        vs <= {"0", "1"} or not all(re.fullmatch(r"\d+", v) for v in vs))]
    for c in cases:
        parts = []
        for k in knobs:
            v = c.params.get(k)
            if v is None or (values[k] <= {"0", "1"} and v == "0"):
                continue
            parts.append(k if values[k] <= {"0", "1"} else f"{k}={v}")
        c.variant = " ".join(parts)


class Run:
    """One input file."""

    def __init__(self, path, index, doc):
        self.path = path
        self.index = index
        header = doc["header"]
        self.header = header
        self.machine = string_map(header.get("machine"))
        self.device = string_map(header.get("device"))
        self.peaks = number_map(header.get("peaks"))
        self.revision = text(header.get("gitRevision"))
        parts = [self.device.get("kind", ""), self.device.get("name", "")]
        label = " ".join(p for p in parts if p) or "unknown device"
        self.label = label + (f" @{self.revision}" if self.revision else "")
        self.cases = [Case(c, self) for c in doc["cases"]]

    def bandwidth(self):
        """DRAM bandwidth peak in GB/s, or None."""
        b = self.peaks.get("bandwidth_gbs")
        return b if b and b > 0 else None

    def compute_peaks(self):
        """[(path, TFLOPS)] of the compute ceilings, largest last."""
        out = [(k[:-len("_tflops")], v) for k, v in self.peaks.items()
               if k.endswith("_tflops") and v > 0]
        return sorted(out, key=lambda kv: kv[1])

    def peak_for(self, case):
        peaks = dict(self.compute_peaks())
        if case.compute_path in peaks:
            return peaks[case.compute_path]
        return max(peaks.values()) if peaks else None


def load_document(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}")
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text ({e.reason})")
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not valid JSON ({e.msg} at line "
                         f"{e.lineno}, column {e.colno}); is it truncated?")
    if not isinstance(doc, dict):
        raise InputError(f"{path}: expected a JSON object at the top level")
    version = doc.get("schemaVersion")
    if isinstance(version, bool) or version != SCHEMA_VERSION:
        raise InputError(
            f"{path}: schemaVersion {json.dumps(version)} is not supported; "
            f"this report reads tessera-bench results of schema version "
            f"{SCHEMA_VERSION} only")
    if not isinstance(doc.get("header"), dict):
        raise InputError(f"{path}: header: expected an object")
    if not isinstance(doc.get("cases"), list):
        raise InputError(f"{path}: cases: expected an array")
    for i, c in enumerate(doc["cases"]):
        if not isinstance(c, dict):
            raise InputError(f"{path}: cases[{i}]: expected an object")
    return doc


def label_runs(runs):
    """Makes the run labels unique (file name, then the run number)."""
    for attempt in ("file", "index"):
        seen = {}
        for r in runs:
            seen.setdefault(r.label, []).append(r)
        clashes = [group for group in seen.values() if len(group) > 1]
        if not clashes:
            return
        for group in clashes:
            for r in group:
                if attempt == "file":
                    r.label += f" ({os.path.basename(r.path)})"
                else:
                    r.label += f" #{r.index + 1}"


# ===---------------------------------------------------------------------=== #
# Formatting
# ===---------------------------------------------------------------------=== #


def fmt(x, sig=4):
    """`sig` significant digits, fixed notation from 0.001 to 10^6."""
    if x is None:
        return DASH
    if x == 0:
        return "0"
    mag = math.floor(math.log10(abs(x)))
    if -3 <= mag < 6:
        return f"{x:.{max(0, sig - 1 - mag)}f}"
    return f"{x:.{sig - 1}e}"


def fmt_trim(x):
    """fmt() without trailing zeros after the decimal point: 67, 989.4."""
    out = fmt(x)
    if "." in out and "e" not in out:
        out = out.rstrip("0").rstrip(".")
    return out


def fmt_error(x):
    if x is None:
        return DASH
    return "0" if x == 0 else f"{x:.2e}"


def fmt_resource(key, value):
    if key == "occupancy":
        pct = value * 100
        return f"{pct:.0f}%" if pct.is_integer() else f"{pct:.1f}%"
    if key.lower().endswith("bytes"):
        return f"{value / 1024:.1f} KiB" if value >= 1024 else f"{value:.0f} B"
    return f"{value:.0f}" if value.is_integer() else fmt(value)


def fmt_peak(key, value):
    if key == "bandwidth_gbs":
        return f"bandwidth {fmt_trim(value)} GB/s"
    if key.endswith("_tflops"):
        path = key[:-len("_tflops")]
        unit = "TOPS" if path == "int8" else "TFLOPS"
        return f"{path} {fmt_trim(value)} {unit}"
    return f"{key} {fmt_trim(value)}"


def plot_text(s):
    """Data text for matplotlib, where paired dollar signs start math."""
    return s.replace("$", r"\$")


def slug(name):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "x"


# ===---------------------------------------------------------------------=== #
# Tables (one model, rendered as HTML and as markdown)
# ===---------------------------------------------------------------------=== #

# Columns that hold a speed of the Tessera kernel: empty unless PASSED.
SPEED_COLUMNS = {"median", "ci", "samples", "tflops", "gbs", "efficiency",
                 "speedup"}


def suite_columns(cases, multi_run):
    cols = []
    if multi_run:
        cols.append(("run", "run"))
    cols += [("case", "case"), ("precision", "precision"),
             ("device", "device"), ("status", "status"),
             ("median", "median ms"), ("ci", "95% CI ms"),
             ("samples", "samples"), ("tflops", "TFLOPS"), ("gbs", "GB/s"),
             ("efficiency", "roofline"), ("baseline", "baseline"),
             ("speedup", "speedup"), ("config", "config"),
             ("maxabs", "max abs err"), ("maxrel", "max rel err"),
             ("compile", "compile ms")]
    present = set()
    for c in cases:
        present.update(c.resources)
    if any(c.resources_arch or c.resources_note for c in cases):
        cols.append(("resarch", "resources for"))
    keys = [k for k in KNOWN_RESOURCES if k in present]
    keys += sorted(present - set(KNOWN_RESOURCES))
    names = {"registers": "registers", "sharedBytes": "shared",
             "occupancy": "occupancy"}
    cols += [("res:" + k, names.get(k, k)) for k in keys]
    return cols


def cell(case, col):
    """(text, css class) of one table cell."""
    c = case
    if col in SPEED_COLUMNS and not c.speed:
        return DASH, "na"
    if col == "run":
        return f"{c.run.index + 1}", ""
    if col == "case":
        return c.name, "name"
    if col == "precision":
        return c.precision, ""
    if col == "device":
        return c.device, ""
    if col == "status":
        klass = c.status.lower()
        return (c.status + (f": {c.reason}" if c.reason else "")), klass
    if col == "median":
        return fmt(c.median), "num"
    if col == "ci":
        lo, hi = c.stats.get("ci95Low"), c.stats.get("ci95High")
        if lo is None or hi is None:
            return DASH, "na"
        return f"[{fmt(lo)}, {fmt(hi)}]", "num"
    if col == "samples":
        n = c.stats.get("count")
        count = DASH if n is None else f"{n:.0f}"
        return count + (f" ({c.stop_reason})" if c.stop_reason else ""), "num"
    if col == "tflops":
        return fmt(c.tflops), "num"
    if col == "gbs":
        return fmt(c.gbs), "num"
    if col == "efficiency":
        if c.efficiency is None:
            return DASH, "na"
        return f"{c.efficiency * 100:.1f}%", "num"
    if col == "baseline":
        if not c.baseline:
            return DASH, "na"
        b = c.baseline
        median = b["median"]
        return b["name"] + (f" ({fmt(median)} ms)" if median else ""), ""
    if col == "speedup":
        s = c.baseline["speedup"] if c.baseline else None
        if s is None:
            return DASH, "na"
        return f"{s:.2f}\u00d7", "num " + ("faster" if s >= 1 else "slower")
    if col == "config":
        conf = ", ".join(f"{k}={v}" for k, v in c.config.items())
        src = f"({c.config_source})" if c.config_source else ""
        return (conf + " " + src).strip() or DASH, ""
    if col == "maxabs":
        return fmt_error(c.max_abs), "num"
    if col == "maxrel":
        return fmt_error(c.max_rel), "num"
    if col == "compile":
        total = c.compile_total()
        tuning = c.compile["tuning"]
        out = fmt(total) if total > 0 else DASH
        if tuning > 0:
            out += f" (+{fmt(tuning)} tuning)"
        return out, "num"
    if col == "resarch":
        out = c.resources_arch
        if c.resources_note:
            out = (out + ": " if out else "") + c.resources_note
        return out or DASH, "" if out else "na"
    if col.startswith("res:"):
        key = col[4:]
        if key not in c.resources:
            return DASH, "na"
        return fmt_resource(key, c.resources[key]), "num"
    raise AssertionError(col)


def table_rows(cases):
    """The cases of a suite, the runs of one case name next to each other."""
    order = {}
    for c in cases:
        order.setdefault((c.name, c.device, c.precision), len(order))
    return sorted(cases, key=lambda c: (order[(c.name, c.device, c.precision)],
                                        c.run.index))


def html_table(cases, runs):
    multi = len(runs) > 1
    cols = suite_columns(cases, multi)
    out = ['<div class="scroll"><table class="results">', "<thead><tr>"]
    out += [f"<th>{html.escape(title)}</th>" for _, title in cols]
    out.append("</tr></thead><tbody>")
    for c in table_rows(cases):
        out.append(f'<tr class="{c.status.lower()}">')
        for col, _ in cols:
            value, klass = cell(c, col)
            attr = f' class="{klass}"' if klass else ""
            title = ""
            if col == "run":
                title = f' title="{html.escape(c.run.label)}"'
            out.append(f'<td data-col="{col}"{attr}{title}>'
                       f"{html.escape(value)}</td>")
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def md_escape(s):
    """Text for a markdown paragraph or table cell (line breaks as <br>)."""
    s = html.escape(s, quote=False).replace("\\", "\\\\")
    for ch in "|[]*_`":
        s = s.replace(ch, "\\" + ch)
    return s.replace("\r", "").replace("\n", "<br>")


def md_table(cases, runs):
    cols = suite_columns(cases, len(runs) > 1)
    lines = ["| " + " | ".join(t for _, t in cols) + " |",
             "|" + "|".join("---" for _ in cols) + "|"]
    for c in table_rows(cases):
        lines.append("| " + " | ".join(md_escape(cell(c, col)[0])
                                       for col, _ in cols) + " |")
    return "\n".join(lines)


# ===---------------------------------------------------------------------=== #
# Plots
# ===---------------------------------------------------------------------=== #


class Plotter:
    def __init__(self, runs):
        import matplotlib
        matplotlib.use("Agg")
        from matplotlib.figure import Figure
        from matplotlib.lines import Line2D
        from matplotlib import ticker
        self.Figure = Figure
        self.Line2D = Line2D
        self.ticker = ticker
        self.colors = (matplotlib.colormaps["tab10"].colors
                       + matplotlib.colormaps["tab20b"].colors)
        self.runs = runs
        self.multi = len(runs) > 1

    def png(self, fig):
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110, bbox_inches="tight",
                    metadata={"Software": None})
        return buf.getvalue()

    def marker(self, run):
        return RUN_MARKERS[run.index % len(RUN_MARKERS)]

    def line(self, run):
        return RUN_LINES[run.index % len(RUN_LINES)]

    def outside_legend(self, ax, handles, title=None):
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1),
                  borderaxespad=0, fontsize=8, title=title,
                  title_fontsize=8, frameon=False,
                  ncol=1 if len(handles) <= 24 else 2)

    def log_ticks(self, axis, values, unit=None):
        """Tick labels of a log axis: engineering notation with `unit`;
        1-2-5 ticks (plain numbers without a unit) when the data span less
        than 2.5 decades."""
        t = self.ticker
        if unit:
            axis.set_major_formatter(t.EngFormatter(unit=unit, sep=" "))
        lo, hi = min(values), max(values)
        if hi / lo < 300:
            subs = (1, 2, 5) if hi / lo >= 4 else tuple(range(1, 10))
            axis.set_major_locator(t.LogLocator(subs=subs))
            axis.set_minor_formatter(t.NullFormatter())
            if not unit:
                axis.set_major_formatter(t.FuncFormatter(
                    lambda v, _: fmt_trim(v)))

    # The suite's problem-size measure: FLOPs when most of its passed cases
    # count FLOPs and, where the run's peaks are known, most of those sit
    # right of the ridge point (compute-bound); bytes otherwise.
    def suite_measure(self, cases):
        passed = [c for c in cases if c.speed]
        with_flops = [c for c in passed if c.flops > 0]
        if not passed or 2 * len(with_flops) <= len(passed):
            return "bytes"
        compute = memory = 0
        for c in with_flops:
            peak, bw = c.run.peak_for(c), c.run.bandwidth()
            if peak is None or bw is None or c.bytes <= 0:
                continue
            if c.flops / c.bytes * bw / 1000 >= peak:
                compute += 1
            else:
                memory += 1
        return "bytes" if memory > compute else "flops"

    def series(self, cases, measure):
        """{series key: {run index: [cases sorted by size]}} and colours."""
        groups = {}
        for c in cases:
            size = c.flops if measure == "flops" else c.bytes
            if not c.speed or size <= 0:
                continue
            groups.setdefault(c.series_key(), {}).setdefault(
                c.run.index, []).append(c)
        for per_run in groups.values():
            for lst in per_run.values():
                lst.sort(key=lambda c: c.flops if measure == "flops"
                         else c.bytes)
        colors = {k: self.colors[i % len(self.colors)]
                  for i, k in enumerate(groups)}
        return groups, colors

    def series_label(self, key):
        kernel, precision, variant = key
        return " ".join(p for p in (kernel, precision, variant) if p)

    def legend_handles(self, groups, colors, extra=()):
        L = self.Line2D
        handles = [L([], [], color=colors[k], lw=2,
                     label=plot_text(self.series_label(k)))
                   for k in groups]
        handles += list(extra)
        if self.multi:
            used = sorted({i for per_run in groups.values() for i in per_run})
            handles += [L([], [], color="0.3", ls=self.line(self.runs[i]),
                          marker=self.marker(self.runs[i]),
                          label=plot_text(
                              f"run {i + 1}: {self.runs[i].label}"))
                        for i in used]
        return handles

    def latency(self, suite, cases):
        measure = self.suite_measure(cases)
        groups, colors = self.series(cases, measure)
        if not groups:
            return None
        fig = self.Figure(figsize=(9.5, 5.2))
        ax = fig.add_subplot()
        medians, lows, highs, sizes = [], [], [], []
        for key, per_run in groups.items():
            for ri, lst in per_run.items():
                medians += [c.median for c in lst]
                sizes += [c.flops if measure == "flops" else c.bytes
                          for c in lst]
                lows += [c.stats.get("ci95Low", c.median) for c in lst]
                highs += [c.stats.get("ci95High", c.median) for c in lst]
        # Bars may leave the plot (a CI reaching zero or beyond); the limits
        # follow the medians so that one noisy case does not flatten the rest.
        ymin = max(min(medians) / 10,
                   min([v for v in lows if v > 0] or [min(medians)]))
        ymax = min(max(medians) * 10, max(highs + medians))
        for key, per_run in groups.items():
            for ri, lst in per_run.items():
                xs = [c.flops if measure == "flops" else c.bytes for c in lst]
                ys = [c.median for c in lst]
                lo = [max(0.0, c.median - max(c.stats.get("ci95Low", c.median),
                                              ymin / 100)) for c in lst]
                hi = [max(0.0, c.stats.get("ci95High", c.median) - c.median)
                      for c in lst]
                ax.errorbar(xs, ys, yerr=[lo, hi], color=colors[key],
                            marker=self.marker(self.runs[ri]), ms=5,
                            ls=self.line(self.runs[ri]), capsize=3, lw=1.5,
                            elinewidth=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylim(ymin / 1.5, ymax * 1.5)
        self.log_ticks(ax.yaxis, [ymin / 1.5, ymax * 1.5])
        self.log_ticks(ax.xaxis, sizes, "FLOP" if measure == "flops" else "B")
        ax.set_xlabel("problem size: "
                      + ("FLOPs" if measure == "flops" else "bytes moved")
                      + " per launch (log)")
        ax.set_ylabel("median time per launch, ms (log)")
        ax.set_title(plot_text(suite)
                     + ": latency (error bars: 95% CI of the mean)")
        ax.grid(True, which="major", alpha=0.3)
        ax.grid(True, which="minor", alpha=0.1)
        self.outside_legend(ax, self.legend_handles(groups, colors))
        return self.png(fig)

    def throughput(self, suite, cases):
        measure = self.suite_measure(cases)
        groups, colors = self.series(cases, measure)
        if not groups:
            return None
        flops = measure == "flops"
        fig = self.Figure(figsize=(9.5, 5.2))
        ax = fig.add_subplot()
        baselines, sizes, rates = set(), [], []

        def rate(work_flops, work_bytes, ms):
            # TFLOPS = FLOP / (ms * 1e-3) / 1e12; GB/s = B / (ms * 1e-3) / 1e9
            return work_flops / ms / 1e9 if flops else work_bytes / ms / 1e6

        for key, per_run in groups.items():
            for ri, lst in per_run.items():
                xs = [c.flops if flops else c.bytes for c in lst]
                sizes += xs
                ys = [c.tflops if flops else c.gbs for c in lst]
                rates += [y for y in ys if y > 0]
                ax.plot(xs, ys, color=colors[key], lw=1.8,
                        ls=self.line(self.runs[ri]),
                        marker=self.marker(self.runs[ri]), ms=5)
                bl = [(x, rate(c.flops, c.bytes, c.baseline["median"]))
                      for x, c in zip(xs, lst) if c.baseline
                      and c.baseline["median"] and c.baseline["median"] > 0]
                rates += [p[1] for p in bl if p[1] > 0]
                if bl:
                    baselines.update(c.baseline["name"] for c in lst
                                     if c.baseline)
                    ax.plot([p[0] for p in bl], [p[1] for p in bl],
                            color=colors[key], lw=1.2, ls="--",
                            marker=self.marker(self.runs[ri]), ms=4,
                            mfc="none", alpha=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        self.log_ticks(ax.xaxis, sizes, "FLOP" if flops else "B")
        if rates:
            lo, hi = ax.get_ylim()
            self.log_ticks(ax.yaxis, [lo, hi])
        ax.set_xlabel("problem size: "
                      + ("FLOPs" if flops else "bytes moved")
                      + " per launch (log)")
        ax.set_ylabel(("achieved TFLOPS" if flops else "achieved GB/s")
                      + " (log)")
        ax.set_title(plot_text(suite) + ": throughput"
                     + (" (dashed: baseline)" if baselines else ""))
        ax.grid(True, which="major", alpha=0.3)
        ax.grid(True, which="minor", alpha=0.1)
        L = self.Line2D
        extra = []
        if baselines:
            extra = [L([], [], color="0.3", lw=1.8,
                       label="Tessera (line style: run)" if self.multi
                       else "Tessera"),
                     L([], [], color="0.3", lw=1.2, ls="--",
                       label=plot_text("baseline: "
                                       + ", ".join(sorted(baselines))))]
        self.outside_legend(ax, self.legend_handles(groups, colors, extra))
        return self.png(fig)

    def roofline(self, run):
        points = [c for c in run.cases
                  if c.speed and c.flops > 0 and c.bytes > 0 and c.tflops]
        if not points:
            return None
        suites = list(dict.fromkeys(c.suite for c in points))
        fig = self.Figure(figsize=(9.5, 5.6))
        ax = fig.add_subplot()
        xs = [c.flops / c.bytes for c in points]
        ys = [c.tflops for c in points]
        bw = run.bandwidth()
        peaks = run.compute_peaks()
        ridges = [p * 1000 / bw for _, p in peaks] if bw else []
        xmin = min(xs + ridges) / 4
        xmax = max(xs + ridges) * 4
        top = [p for _, p in peaks]
        ymin = min(ys) / 4
        ymax = max(ys + top) * 3
        if bw:
            ymin = min(ymin, xmin * bw / 1000)
        ceiling = dict(color="0.35", lw=1.3, zorder=1)
        if bw:
            xr = ridges[-1] if ridges else xmax
            ax.plot([xmin, xr], [xmin * bw / 1000, xr * bw / 1000],
                    **ceiling)
        for (path, p), xr in zip(peaks, ridges or [xmin] * len(peaks)):
            ax.plot([xr, xmax], [p, p], ls="-." if ridges else "--",
                    **ceiling)
            unit = "TOPS" if path == "int8" else "TFLOPS"
            ax.annotate(f"{path} peak {fmt_trim(p)} {unit}", (xmax, p),
                        xytext=(-4, 4), textcoords="offset points",
                        ha="right", fontsize=8, color="0.25")
        for i, s in enumerate(suites):
            sel = [c for c in points if c.suite == s]
            ax.scatter([c.flops / c.bytes for c in sel],
                       [c.tflops for c in sel], s=30, zorder=3,
                       color=self.colors[i % len(self.colors)],
                       edgecolors="black", linewidths=0.4,
                       label=plot_text(s))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(xmin, xmax)
        ax.set_ylim(ymin, ymax)
        self.log_ticks(ax.xaxis, [xmin, xmax])
        self.log_ticks(ax.yaxis, [ymin, ymax])
        if bw:
            # The bandwidth label runs along the diagonal, above it.
            xr = ridges[-1] if ridges else xmax
            x0 = math.sqrt(xmin * xr) / 3
            (p0, p1) = ax.transData.transform(
                [(x0, x0 * bw / 1000), (x0 * 2, x0 * 2 * bw / 1000)])
            angle = math.degrees(math.atan2(p1[1] - p0[1], p1[0] - p0[0]))
            ax.annotate(f"DRAM {fmt_trim(bw)} GB/s", (x0, x0 * bw / 1000),
                        xytext=(-4, 4), textcoords="offset points",
                        fontsize=8, color="0.25", rotation=angle,
                        rotation_mode="anchor", ha="left", va="bottom")
        ax.set_xlabel("arithmetic intensity, FLOP/byte (log)")
        ax.set_ylabel("achieved TFLOPS (log)")
        title = f"Roofline: run {run.index + 1}, {run.label}"
        if not peaks and not bw:
            title += "\n(no peaks recorded: no ceilings)"
        ax.set_title(plot_text(title), fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
        ax.grid(True, which="minor", alpha=0.1)
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0,
                  fontsize=8, title="suite", title_fontsize=8, frameon=False)
        return self.png(fig)

    def compile_times(self, cases):
        bars = {}
        for c in cases:
            if any(v > 0 for v in c.compile.values()):
                key = (c.suite, c.kernel or c.name, c.run.index)
                bars.setdefault(key, []).append(c)
        if not bars:
            return None
        stages = [s for s in COMPILE_STAGES
                  if any(c.compile[s] > 0 for lst in bars.values()
                         for c in lst)]
        # The runs of a kernel next to each other.
        first = {}
        for suite, kernel, _ in bars:
            first.setdefault((suite, kernel), len(first))
        keys = sorted(bars, key=lambda k: (first[k[:2]], k[2]))
        labels = []
        for suite, kernel, ri in keys:
            label = f"{suite}: {kernel}"
            if self.multi:
                label += f" [run {ri + 1}]"
            labels.append(plot_text(label))
        medians = {s: [statistics.median(c.compile[s] for c in bars[k])
                       for k in keys] for s in stages}
        fig = self.Figure(figsize=(9.5, 1.4 + 0.32 * len(keys)))
        ax = fig.add_subplot()
        left = [0.0] * len(keys)
        ypos = list(range(len(keys)))
        for i, s in enumerate(stages):
            ax.barh(ypos, medians[s], left=left, height=0.7, label=s,
                    color=self.colors[i % len(self.colors)])
            left = [a + b for a, b in zip(left, medians[s])]
        ax.set_yticks(ypos)
        ax.set_yticklabels(labels, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("compile time, ms (median of each stage over the "
                      "kernel's cases)")
        ax.set_title("Compile time by stage")
        ax.grid(True, axis="x", alpha=0.3)
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0,
                  fontsize=8, title="stage", title_fontsize=8, frameon=False)
        return self.png(fig)


# ===---------------------------------------------------------------------=== #
# The page
# ===---------------------------------------------------------------------=== #

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif;
       margin: 1.5em auto; max-width: 1400px; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc;
       padding-bottom: .2em; margin-top: 2em; } h3 { margin-top: 1.4em; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #d4d4d4; padding: 3px 6px; vertical-align: top; }
th { background: #f0f0f0; text-align: left; position: sticky; top: 0; }
table.kv th { width: 11em; }
table.results tbody tr:nth-child(even) { background: #fafafa; }
td.num { text-align: right; font-variant-numeric: tabular-nums;
         white-space: nowrap; }
td.na { color: #999; text-align: center; }
td.name { white-space: nowrap; }
td.passed { color: #1a7f37; font-weight: 600; }
td.failed { color: #c62828; white-space: pre-wrap; min-width: 18em; }
td.skipped { color: #8a6d00; white-space: pre-wrap; min-width: 18em; }
td.faster { color: #1a7f37; } td.slower { color: #c62828; }
tr.failed td.name, tr.skipped td.name { color: #666; }
.scroll { overflow-x: auto; }
figure { margin: 1em 0; } figure img { max-width: 100%; height: auto; }
figcaption { font-size: 13px; color: #555; }
code { font-size: 12px; word-break: break-all; }
.note { color: #555; font-style: italic; }
"""


def header_rows(run):
    h = run.header
    rows = [("file", run.path),
            ("started at", text(h.get("startedAt"))),
            ("compiler version", text(h.get("compilerVersion"))),
            ("git revision", run.revision),
            ("command line", text(h.get("commandLine")))]
    machine = run.machine
    order = ["hostname", "cpu", "cores", "memory", "os"]
    keys = [k for k in order if k in machine] + sorted(
        k for k in machine if k not in order)
    rows.append(("machine", "; ".join(f"{k}: {machine[k]}" for k in keys)))
    dev = run.device
    order = ["kind", "name", "arch"]
    keys = [k for k in order if k in dev] + sorted(
        k for k in dev if k not in order and k != "peakSource")
    rows.append(("device", "; ".join(f"{k}: {dev[k]}" for k in keys)))
    peaks = ", ".join(fmt_peak(k, v) for k, v in sorted(run.peaks.items()))
    if dev.get("peakSource"):
        peaks += f" (source: {dev['peakSource']})" if peaks else (
            f"none (source: {dev['peakSource']})")
    rows.append(("peaks used", peaks or "none recorded (no roofline)"))
    return rows


def counts(cases):
    n = {s: sum(c.status == s for c in cases)
         for s in ("PASSED", "FAILED", "SKIPPED")}
    return (f"{len(cases)} case{'s' if len(cases) != 1 else ''}: "
            f"{n['PASSED']} passed, {n['FAILED']} failed, "
            f"{n['SKIPPED']} skipped")


class Report:
    def __init__(self, runs, plotter):
        self.runs = runs
        self.plotter = plotter
        self.cases = [c for r in runs for c in r.cases]
        self.suites = list(dict.fromkeys(c.suite for c in self.cases))
        self.images = {}  # file name -> PNG bytes, in order
        self.html = []
        self.md = []

    def add_image(self, name, data, caption):
        if data is None:
            return False
        base, n = name, 2
        while name in self.images:
            name = f"{base[:-4]}-{n}.png"
            n += 1
        self.images[name] = data
        b64 = base64.b64encode(data).decode("ascii")
        self.html.append(
            f'<figure><img alt="{html.escape(caption)}" '
            f'src="data:image/png;base64,{b64}"><figcaption>'
            f"{html.escape(caption)}</figcaption></figure>")
        self.md.append(f"![{md_escape(caption)}]({name})\n")
        return True

    def note(self, s):
        self.html.append(f'<p class="note">{html.escape(s)}</p>')
        self.md.append(f"*{md_escape(s)}*\n")

    def heading(self, level, s):
        self.html.append(f"<h{level}>{html.escape(s)}</h{level}>")
        self.md.append("#" * level + " " + md_escape(s) + "\n")

    def build(self):
        now = datetime.datetime.now(datetime.timezone.utc)
        stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
        self.heading(1, "tessera-bench report")
        inputs = ", ".join(os.path.basename(r.path) for r in self.runs)
        intro = (f"{len(self.runs)} result file"
                 f"{'s' if len(self.runs) != 1 else ''} ({inputs}), "
                 f"{counts(self.cases)}. Generated {stamp}.")
        self.html.append(f"<p>{html.escape(intro)}</p>")
        self.md.append(md_escape(intro) + "\n")
        if len(self.runs) > 1:
            self.note("Several runs: the plots overlay them (one marker and "
                      "line style per run) and the tables list the runs of a "
                      "case next to each other.")

        self.heading(2, "Runs")
        for r in self.runs:
            self.heading(3, f"Run {r.index + 1}: {r.label}")
            rows = header_rows(r)
            self.html.append('<table class="kv">' + "".join(
                f"<tr><th>{html.escape(k)}</th><td>"
                + (f"<code>{html.escape(v)}</code>" if k == "command line"
                   else html.escape(v)) + "</td></tr>" for k, v in rows)
                + "</table>")
            self.md.append("| | |\n|---|---|\n" + "\n".join(
                f"| {md_escape(k)} | "
                + (f"`{v}`" if k == "command line" and "`" not in v
                   else md_escape(v)) + " |" for k, v in rows) + "\n")
            self.html.append(f"<p>{html.escape(counts(r.cases))}.</p>")
            self.md.append(md_escape(counts(r.cases)) + ".\n")

        if not self.cases:
            self.heading(2, "Results")
            self.note("The input files hold no cases: nothing to tabulate "
                      "or plot.")
            return
        if not any(c.speed for c in self.cases):
            self.note("No case passed: the tables list the failures, and "
                      "there is no speed to plot.")

        for suite in self.suites:
            cases = [c for c in self.cases if c.suite == suite]
            assign_variants(cases)
            self.heading(2, f"Suite {suite}")
            self.html.append(f"<p>{html.escape(counts(cases))}.</p>")
            self.md.append(md_escape(counts(cases)) + ".\n")
            p = self.plotter
            measure = p.suite_measure(cases)
            what = "FLOPs" if measure == "flops" else "bytes moved"
            drew = self.add_image(
                f"latency-{slug(suite)}.png", p.latency(suite, cases),
                f"{suite}: median latency vs problem size ({what} per "
                "launch), one line per kernel, precision and variant"
                + (" and run" if len(self.runs) > 1 else "")
                + "; error bars are the 95% confidence interval of the mean.")
            rate = "TFLOPS" if measure == "flops" else "GB/s"
            self.add_image(
                f"throughput-{slug(suite)}.png", p.throughput(suite, cases),
                f"{suite}: achieved {rate} vs problem size; dashed lines are "
                "the baseline timed in the same run, where there is one.")
            if not drew:
                self.note("No passed case with a problem size in this suite: "
                          "nothing to plot.")
            self.html.append(html_table(cases, self.runs))
            self.md.append(md_table(cases, self.runs) + "\n")

        self.heading(2, "Roofline")
        any_roofline = False
        for r in self.runs:
            any_roofline |= self.add_image(
                f"roofline-run{r.index + 1}.png", self.plotter.roofline(r),
                f"Run {r.index + 1} ({r.label}): achieved TFLOPS vs "
                "arithmetic intensity, with the ceilings of the peaks the "
                "run recorded (diagonal: DRAM bandwidth; horizontal: compute "
                "peak per instruction path). Cases without FLOPs are left "
                "out.")
        if not any_roofline:
            self.note("No passed case with both FLOPs and bytes: no roofline.")

        self.heading(2, "Compile time")
        if not self.add_image(
                "compile-time.png", self.plotter.compile_times(self.cases),
                "Compile time per kernel, stacked by stage (the median of "
                "each stage over the kernel's cases; tuning included where "
                "it ran)."):
            self.note("No compile times recorded.")

    def html_page(self):
        return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset="
                "\"utf-8\"><meta name=\"viewport\" content=\"width=device-"
                "width, initial-scale=1\"><title>tessera-bench report</title>"
                f"<style>{CSS}</style></head><body>\n"
                + "\n".join(self.html) + "\n</body></html>\n")

    def markdown(self):
        return "\n".join(self.md)


def write_atomically(path, data):
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def main(argv):
    parser = argparse.ArgumentParser(
        description="Write an HTML page and a markdown report (with "
        "matplotlib plots) from tessera-bench result files.")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="output directory (created if missing)")
    parser.add_argument("files", nargs="+", metavar="RESULTS.json",
                        help="result files (schema version 1)")
    args = parser.parse_args(argv)

    runs = []
    try:
        for i, path in enumerate(args.files):
            runs.append(Run(path, i, load_document(path)))
    except InputError as e:
        print(f"tessera-bench report: {e}", file=sys.stderr)
        return 2
    label_runs(runs)
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        print(f"tessera-bench report: {args.out}: exists and is not a "
              "directory", file=sys.stderr)
        return 2
    try:
        plotter = Plotter(runs)
    except ImportError as e:
        print(f"tessera-bench report: matplotlib cannot be imported ({e}); "
              "install python3-matplotlib (scripts/install-deps.sh)",
              file=sys.stderr)
        return 2

    # Everything is rendered in memory first: a failure writes nothing.
    report = Report(runs, plotter)
    report.build()
    page = report.html_page().encode("utf-8")
    markdown = report.markdown().encode("utf-8")

    os.makedirs(args.out, exist_ok=True)
    written = []
    for name, data in report.images.items():
        written.append(os.path.join(args.out, name))
        write_atomically(written[-1], data)
    written.append(os.path.join(args.out, "report.md"))
    write_atomically(written[-1], markdown)
    written.append(os.path.join(args.out, "index.html"))
    write_atomically(written[-1], page)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
