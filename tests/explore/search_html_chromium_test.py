"""perflow search --html loaded in headless Chromium: the page Chromium shows (its DOM after
loading, with no network) has the counts, the ranked table and the Pareto front's table of
`perflow search --format json`, the Pareto chart and the winner's timeline as SVG, and it
renders to a screenshot. At 1400 px the page fits its width (no horizontal scrolling) and
the winner's whole timeline is inside it; the winner's figures (step time, compute, idle,
peak memory) are those `perflow simulate` reports for its config. Exits 77 (skipped) when
Chromium is not installed.

Usage: search_html_chromium_test.py PERFLOW SOURCE_DIR
"""
import html.parser
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

perflow, source = sys.argv[1], sys.argv[2]
chromium = shutil.which("chromium")
if chromium is None:
    print("chromium is not installed")
    sys.exit(77)
search = os.path.join(source, "examples", "search_llama3_70b.json")
failures = []
MEASURE = """<script>
const svg = document.querySelector("#timeline svg").getBoundingClientRect();
document.body.insertAdjacentHTML("beforeend", '<pre id="measure">' + JSON.stringify({
  scroll: document.documentElement.scrollWidth, inner: window.innerWidth,
  left: svg.left, right: svg.right}) + "</pre>");
</script>"""


def check(ok, what):
    if not ok:
        failures.append(what)


class Page(html.parser.HTMLParser):
    """The tables (rows of cell texts), the text of #counts and the SVG elements."""

    def __init__(self):
        super().__init__()
        self.tables, self.row, self.cell = [], None, None
        self.counts, self.in_counts = "", False
        self.svgs, self.circles, self.links = 0, 0, []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.row = []
            self.tables[-1].append(self.row)
        elif tag in ("td", "th"):
            self.cell = ""
        elif tag == "p" and attrs.get("id") == "counts":
            self.in_counts = True
        elif tag == "svg":
            self.svgs += 1
        elif tag == "circle":
            self.circles += 1
        for key in ("href", "src"):
            if key in attrs and not attrs[key].startswith("#"):
                self.links.append(attrs[key])

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.row.append(self.cell.strip())
            self.cell = None
        elif tag == "p":
            self.in_counts = False

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data
        if self.in_counts:
            self.counts += data


with tempfile.TemporaryDirectory() as tmp:
    page_path = os.path.join(tmp, "report.html")
    result = subprocess.run([perflow, "search", search, "--html", page_path, "--format", "json"],
                            capture_output=True, text=True, check=True)
    plans = json.loads(result.stdout)
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={os.path.join(tmp, 'profile')}", "--window-size=1400,2400"]
    dom = subprocess.run([chromium, *flags, "--dump-dom", "file://" + page_path],
                         capture_output=True, text=True, timeout=120).stdout
    # The layout Chromium gives the page at 1400 px, written into the DOM by a script added to
    # a copy (the page itself has none).
    with open(page_path) as f:
        measured_page = f.read().replace("</body>", MEASURE + "</body>")
    measured_path = os.path.join(tmp, "measured.html")
    with open(measured_path, "w") as f:
        f.write(measured_page)
    layout_dom = subprocess.run([chromium, *flags, "--dump-dom", "file://" + measured_path],
                                capture_output=True, text=True, timeout=120).stdout
    layout = json.loads(layout_dom.split('<pre id="measure">')[-1].split("</pre>")[0])
    check(layout["scroll"] <= layout["inner"],
          f"the page is {layout['scroll']} px wide in a {layout['inner']} px window")
    check(0 <= layout["left"] and layout["right"] <= layout["inner"],
          f"the timeline spans {layout['left']}..{layout['right']} px of {layout['inner']}")
    # The winner's figures, by perflow simulate.
    config = os.path.join(tmp, "winner.json")
    with open(config, "w") as f:
        json.dump(plans["best"][0]["config"], f)
    summary = subprocess.run([perflow, "simulate", config, "--report", os.path.join(tmp, "r.json")],
                             capture_output=True, text=True, check=True).stdout
    with open(os.path.join(tmp, "r.json")) as f:
        report = json.load(f)
    makespan = summary.split("makespan", 1)[1].split()[0]
    bubble = summary.split("bubble ratio", 1)[1].split()[0]
    peak = max(d["peak_total_memory"] for d in report["devices"])
    shot = os.path.join(tmp, "shot.png")
    subprocess.run([chromium, *flags, f"--screenshot={shot}", "file://" + page_path],
                   capture_output=True, timeout=120)

    page = Page()
    page.feed(dom)
    expected_counts = (f"{plans['considered']} plans considered, {plans['pruned']} pruned "
                       f"({plans['pruned_divisibility']} by divisibility, {plans['pruned_memory']} "
                       f"by memory), {plans['simulated']} simulated, {plans['fit']} fit")
    check(page.counts.strip() == expected_counts, f"counts shown: {page.counts.strip()!r}")
    check(len(page.tables) >= 2, f"expected the ranked and Pareto tables, got {len(page.tables)}")
    for table, plans_of, name in ((page.tables[0], plans["best"], "best"),
                                  (page.tables[1], plans["pareto"], "pareto")):
        rows = table[1:]
        check(len(rows) == len(plans_of), f"{name}: {len(rows)} rows shown, {len(plans_of)} plans")
        for row, plan in zip(rows, plans_of):
            shown = dict(zip(table[0], row))
            check(shown.get("rank") == str(plan["rank"]), f"{name} rank {shown}")
            check(shown.get("schedule") == plan["schedule"], f"{name} schedule {shown}")
            check(shown.get("PP x TP x DP") ==
                  f"{plan['pipeline']}x{plan['tensor_parallel']}x{plan['data_parallel']}",
                  f"{name} degrees {shown}")
            check(shown.get("recompute") == plan["recompute"], f"{name} recompute {shown}")
    breakdown = {row[0]: row[1] for row in page.tables[2] if len(row) == 2}
    check(breakdown.get("step time") == makespan,
          f"winner's step time {breakdown.get('step time')!r}, simulate's {makespan!r}")
    idle = breakdown.get("idle (the bubble ratio)", "")
    check(idle.endswith(f"({bubble})"), f"winner's idle {idle!r}, simulate's bubble {bubble!r}")
    check(breakdown.get("peak memory (static + activations, fullest GPU)") == f"{peak / 1e9:.1f}GB",
          f"winner's peak {breakdown}, simulate's {peak}")
    check(page.svgs >= 2, f"expected the Pareto chart and the timeline, got {page.svgs} SVGs")
    check(page.circles >= len(plans["pareto"]), f"{page.circles} points for {len(plans['pareto'])}")
    check(not page.links, f"the page loads something: {page.links[:3]}")
    # The screenshot: a PNG of the window's size.
    with open(shot, "rb") as f:
        head = f.read(24)
    check(head[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", head[16:24]) == (1400, 2400),
          "no 1400x2400 screenshot")

for failure in failures:
    print("FAIL:", failure)
print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
