"""The README and docs/ stay true: the specs table is the generator's output, every cheap
command block of the README runs, every relative link resolves, every docs page and every
decision is reachable from the README, and every Python command uses the project's venv."""
import re
import subprocess
import sys

import pytest

from conftest import ROOT

README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").rglob("*.md"))
PAGES = [README, *DOCS]

# A command block the test does not run says why on the line before its fence.
SKIP = re.compile(r"^<!-- readme-test: skip: (\S.*?) -->$")
COMMANDS, OUTPUT = {"sh", "bash", "shell"}, {"text"}
FENCE = re.compile(r"^```(\S*)\s*$")


def fenced_blocks(text):
    """(first line number, language, body, the line before the fence) of each fenced block."""
    lines, blocks, i = text.splitlines(), [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m:
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            before = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            blocks.append((i + 1, m.group(1), "\n".join(lines[i + 1:end]), before))
            i = end
        i += 1
    return blocks


def prose(text):
    """The text outside fenced blocks and inline code spans (where links are links)."""
    kept, inside = [], False
    for line in text.splitlines():
        if FENCE.match(line) or (inside and line.startswith("```")):
            inside = not inside
            continue
        if not inside:
            kept.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(kept)


README_BLOCKS = fenced_blocks(README.read_text())


def test_specs_table_is_the_generators():
    from experiments.spectable import BEGIN, END, markdown
    from experiments.specs import all_specs

    text = README.read_text()
    assert BEGIN in text and END in text, f"README lacks the specs table's markers {BEGIN} / {END}"
    current = text[text.index(BEGIN):text.index(END) + len(END)] + "\n"
    assert current == markdown(all_specs()), (
        "README's table of specs is stale: replace the lines between its markers with the output "
        "of `.venv/bin/python -m experiments list --markdown`")


def test_list_markdown_prints_the_table_with_each_specs_runs_engines_and_claims():
    from experiments.planner import plan
    from experiments.spectable import markdown
    from experiments.specs import all_specs, load_spec

    proc = subprocess.run([sys.executable, "-m", "experiments", "list", "--markdown"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout == markdown(all_specs()), proc.stderr
    spec = load_spec("lrt_timeline")  # plain Zen and Zen+ (--zen-plus on) side by side
    row = next(line for line in proc.stdout.splitlines() if line.startswith("| `lrt_timeline`"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3] == "zen+, zen"
    assert cells[4].split()[0] == str(len(plan(spec, "small").runs))
    assert cells[6] == str(len(spec["claims"]))


@pytest.mark.parametrize("line,lang,body,before", README_BLOCKS,
                         ids=[f"README.md:{b[0]}" for b in README_BLOCKS])
def test_readme_block_runs_or_says_why_not(line, lang, body, before):
    """A command block runs (exit 0, a minute at most) unless the line before it says why not;
    an output block is marked `text`; any other fence is an error."""
    where = f"README.md:{line}"
    assert lang in COMMANDS | OUTPUT, (
        f"{where}: fence ```{lang}: mark commands ```sh and output ```text")
    if lang in OUTPUT:
        return
    syntax = subprocess.run(["bash", "-n", "-c", body], capture_output=True, text=True)
    assert syntax.returncode == 0, f"{where}: not valid bash: {syntax.stderr}"
    if SKIP.match(before):
        return
    assert not before.startswith("<!-- readme-test"), (
        f"{where}: a skip marker is '<!-- readme-test: skip: REASON -->', not {before!r}")
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", body], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, (
        f"{where}: exit {proc.returncode}; if the block is too slow or needs a build, put "
        f"'<!-- readme-test: skip: REASON -->' before it\n{proc.stdout[-1500:]}{proc.stderr[-1500:]}")


def test_some_readme_blocks_run():
    ran = [b for b in README_BLOCKS if b[1] in COMMANDS and not SKIP.match(b[3])]
    assert ran, "every command block of the README is skipped: the README test runs none"


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"<[^>]+>|[`*]", "", heading).strip().lower()
    return re.sub(r"\s", "-", re.sub(r"[^\w\- ]", "", text))


def anchors(path):
    text = path.read_text()
    found, seen = set(), {}
    for line in prose(text).splitlines():
        m = re.match(r"#{1,6} (.*)", line)
        if m:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    found |= set(re.findall(r'<a id="([^"]+)"', text))
    return found


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def links(path):
    return [t for t in LINK.findall(prose(path.read_text()))
            if not re.match(r"[a-z]+:", t)]  # http:, https:, mailto: are not checked


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_relative_links_resolve(page):
    broken = []
    for target in links(page):
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        if not dest.exists():
            broken.append(f"{target}: no file {dest.relative_to(ROOT)}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading or <a id> {anchor!r} in {dest.name}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


@pytest.mark.parametrize("index", [README, ROOT / "docs" / "README.md"],
                         ids=["README.md", "docs/README.md"])
def test_every_docs_page_is_in_the_index(index):
    linked = {(index.parent / t.partition("#")[0]).resolve() for t in links(index)}
    missing = [str(p.relative_to(ROOT)) for p in DOCS
               if p.name != "README.md" and p.resolve() not in linked]
    assert not missing, f"{index.relative_to(ROOT)} links to no {', '.join(missing)}"


def test_every_decision_has_its_line_in_the_readme():
    """The developers' guide wants the decisions in the README: one line per decision there,
    linking to its full text in docs/decisions.md."""
    ids = re.findall(r'^- <a id="([^"]+)"></a>', (ROOT / "docs/decisions.md").read_text(), re.M)
    text = README.read_text()
    section = text[text.index("## Decisions beyond"):]
    section = section[:section.index("\n## ", 1)]
    listed = re.findall(r"\]\(docs/decisions\.md#([^)]+)\)", section)
    assert ids and sorted(listed) == sorted(ids), (
        f"README's decisions and docs/decisions.md differ: only in docs "
        f"{sorted(set(ids) - set(listed))}, only in README {sorted(set(listed) - set(ids))}")


BARE_PYTHON = re.compile(r"(?<![\w/.-])python3?\s+(-m\s|\S+\.py\b)")


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_python_commands_use_the_venv(page):
    """`.venv/bin/python -m ...`, as scripts/setup.sh makes it: a bare python or python3 runs
    without the project's packages."""
    bad = [f"{page.relative_to(ROOT)}:{n}: {line.strip()}"
           for n, line in enumerate(page.read_text().splitlines(), 1) if BARE_PYTHON.search(line)]
    assert not bad, "use .venv/bin/python: " + "; ".join(bad)
