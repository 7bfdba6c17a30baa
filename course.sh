#!/usr/bin/env bash
# Pipeline Bubbles: set up and open the course, or run every check.
#
#   bash course.sh lab             set up (first time only), then open JupyterLab at lesson 00
#   bash course.sh lab --port=9000 --no-browser    ... with extra JupyterLab options
#   bash course.sh lab --lang zh   the Chinese edition (中文版): JupyterLab in Chinese, notebooks/zh/
#   bash course.sh test            set up (first time only), then run every check
#   bash course.sh test unit lint  run only some checks: lint types exercises unit browser notebooks
#   bash course.sh setup           only set up (and make your workspace/)
#   bash course.sh setup --torch   ... and add torch 2.13.0 for lesson 06's real run (CPU build without CUDA)
#   bash course.sh setup --classroom  ... and add Voila, for classroom mode (python -m bubblekit classroom)
#   bash course.sh setup --slides  ... and add RISE, live slideshows of the lessons in JupyterLab
#   bash course.sh setup --nbgrader   ... and add nbgrader with its panels in JupyterLab (instructors,
#                                  students of an nbgrader course); --no-nbgrader hides them again
#   bash course.sh lite            build the no-install edition (JupyterLite, Python in the browser) in _site/;
#                                  serve it with: python -m http.server -d _site
#
# Set-up makes a virtual environment in .venv (python3 -m venv) and installs what the command
# needs into it: `lab` and `setup` install `pip install -e ".[course]"` (bubblekit, JupyterLab,
# ipywidgets, matplotlib, sympy); `setup --torch` adds torch==2.13.0 (the `lab` extra), `setup
# --classroom` Voila, `setup --nbgrader` nbgrader; `test` installs everything it checks
# (".[course,classroom,nbgrader,test]" and torch). A stamp per extra, keyed on pyproject.toml,
# makes a second run skip the installation. `lite` installs the `lite` extra (JupyterLite) into its own
# build environment, .lite-cache/venv (never .venv), and
# runs scripts/build_lite.py: Pyodide's core files come from npm (`npm pack`, so it needs npm),
# wheels from PyPI, both cached in .lite-cache/ (a rebuild downloads nothing); it writes _site/.
#
# What it writes: .venv, and your workspace/. The Jupyter kernel is the one inside .venv, found
# first through JUPYTER_PATH; the notebook-trust database, JupyterLab's workspace state (open
# tabs), Jupyter's runtime files and IPython's profile are kept in .venv too (.venv/etc/jupyter/
# jupyter_config.json, JUPYTERLAB_WORKSPACES_DIR, JUPYTER_RUNTIME_DIR, IPYTHONDIR); only when the
# folder's path is too long for a kernel's socket name do runtime files go to /tmp. pip keeps its
# download cache in ~/.cache/pip and matplotlib its font list in ~/.cache/matplotlib.
#
# `setup` and `lab` also make your workspace: workspace/ gets a copy of each exercise
# notebook it does not have yet, named NN_topic.exercises.ipynb (never overwriting one); you
# work there. `lab` serves the whole course folder and opens notebooks/00_start_here.ipynb
# (only it: tabs of an earlier session are not reopened); it trusts the course's notebooks (so
# their saved pictures and animations show), prints the address to open (with its token) and
# keeps Jupyter's other messages to the ones that help. `test` checks only what the course
# ships: your workspace, scratch notebooks and the lessons you ran and saved are never checked
# and never touched.
#
# `--lang zh` (for `lab` and `setup`) installs the JupyterLab zh-CN language pack once (the
# [zh] extra), makes JupyterLab's display language Chinese with a settings override inside
# .venv (.venv/share/jupyter/lab/settings/overrides.d/bubblekit-language.json; `--lang en`, the
# default, removes it), checks that the browser has a font for Chinese (fontconfig's
# `fc-list :lang=zh`; it says how to get one), copies the Chinese exercises into workspace/zh/
# and opens notebooks/zh/00_start_here.ipynb. The notebooks choose bubblekit's language themselves.
#
# Environment: PYTHON (default python3) picks the interpreter for a new .venv;
# BUBBLEKIT_VENV (default .venv) its folder; BUBBLEKIT_CHECK_WORKTREE=1 makes `test` check
# notebooks as they are on disk (for contributors, before committing); BUBBLEKIT_TORCH_INDEX
# an extra pip index for torch (default: PyTorch's CPU index on Linux without CUDA, none elsewhere).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"
ROOT=$PWD
VENV=${BUBBLEKIT_VENV:-$ROOT/.venv}
PYTHON=${PYTHON:-python3}
LAB_EXTRAS="course"                        # what the lessons need (bash course.sh lab / setup)
TEST_EXTRAS="course,classroom,nbgrader,test"  # + torch: what bash course.sh test checks
STAMPS="$VENV/.bubblekit-setup.d"          # one stamp per installed extra

export PYDEVD_DISABLE_FILE_VALIDATION=1
export JUPYTER_PATH="$VENV/share/jupyter${JUPYTER_PATH:+:$JUPYTER_PATH}"
export PIP_DISABLE_PIP_VERSION_CHECK=1

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
t() { if [ "${COURSE_LANG:-en}" = zh ]; then printf '%s' "$2"; else printf '%s' "$1"; fi; }  # t ENGLISH CHINESE: the learner's language (--lang)
die() { printf 'course.sh: %s\n' "$*" >&2; exit 1; }

setup_key() {  # hash of pyproject.toml, one extra ($1) and the venv's Python version
    "$VENV/bin/python" - "$1" <<'PY'
import hashlib, sys
data = open("pyproject.toml", "rb").read() + sys.argv[1].encode() + sys.version.encode()
print(hashlib.sha256(data).hexdigest())
PY
}

extra_ready() {  # is extra $1 installed for this pyproject.toml?
    [ -f "$STAMPS/$1" ] && [ "$(cat "$STAMPS/$1")" = "$(setup_key "$1")" ]
}

pip_install() {  # pip install ARGS..., quietly; some machines' pip configuration names package
    # folders that do not exist, and pip then prints one harmless "Location ... is ignored"
    # warning per package: drop those lines only
    "$VENV/bin/python" -m pip install --quiet "$@" 2>&1 \
        | { grep -v "is ignored: it is neither a file nor a directory" || true; }
    return "${PIPESTATUS[0]}"
}

make_venv() {
    command -v "$PYTHON" >/dev/null 2>&1 || die "$(t "$PYTHON not found: install Python 3.10 or newer (Debian: apt-get install python3 python3-venv)" "找不到 $PYTHON：请安装 Python 3.10 或更新的版本（Debian：apt-get install python3 python3-venv）")"
    "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
        || die "Python 3.10 or newer is needed, $PYTHON is $("$PYTHON" -c 'import sys; print(sys.version.split()[0])')"
    if [ ! -x "$VENV/bin/python" ]; then
        [ -z "${BUBBLEKIT_NO_INSTALL:-}" ] || die "no environment at $VENV but BUBBLEKIT_NO_INSTALL is set"
        say "$(t "creating $VENV" "正在创建虚拟环境 $VENV")"
        if ! "$PYTHON" -m venv "$VENV"; then
            rm -rf "$VENV"
            die "$(t "could not create a virtual environment: install the venv module (Debian/Ubuntu: apt-get install python3-venv)" "无法创建虚拟环境：请安装 venv 模块（Debian/Ubuntu：apt-get install python3-venv）")"
        fi
    fi
}

extra_modules() {  # the modules that show extra $1 is there (BUBBLEKIT_NO_INSTALL: the environment is used as it is)
    case $1 in
        course) echo "jupyterlab ipywidgets matplotlib sympy" ;;
        classroom) echo "voila" ;;
        nbgrader) echo "nbgrader" ;;
        test) echo "pytest nbval playwright" ;;
        lite) echo "jupyterlite_core jupyterlite_pyodide_kernel jupyter_server packaging" ;;
        lab) echo "torch" ;;
        zh) echo "jupyterlab_language_pack_zh_CN" ;;
    esac
}

setup() {  # setup EXTRA,EXTRA...: install bubblekit with the extras that are not installed yet
    make_venv
    local want=() missing=() x
    IFS=, read -r -a want <<< "$1"
    for x in "${want[@]}"; do extra_ready "$x" || missing+=("$x"); done
    if [ ${#missing[@]} -eq 0 ] && "$VENV/bin/python" -c 'import bubblekit' 2>/dev/null; then
        return 0
    fi
    if [ -n "${BUBBLEKIT_NO_INSTALL:-}" ]; then
        # tests that run this script in a temporary copy of the course share a ready environment:
        # they set BUBBLEKIT_NO_INSTALL so that nothing is installed (pip install -e of the copy
        # would re-point the environment at it); it must already hold what the command needs
        local mods=""
        for x in "${want[@]}"; do mods+=" $(extra_modules "$x")"; done
        # shellcheck disable=SC2086  # module names
        "$VENV/bin/python" -c "import importlib, sys; [importlib.import_module(m) for m in sys.argv[1:]]" bubblekit $mods \
            2>/dev/null || die "set-up needed ($VENV lacks the extras [$1]) but BUBBLEKIT_NO_INSTALL is set: run 'bash course.sh setup' in the course folder first"
        return 0
    fi
    local pip_extras=() x
    for x in "${missing[@]}"; do [ "$x" = lab ] || pip_extras+=("$x"); done
    local started=$SECONDS
    if [ ${#pip_extras[@]} -gt 0 ] || ! "$VENV/bin/python" -c 'import bubblekit' 2>/dev/null; then
        local list
        list=$(IFS=,; echo "${pip_extras[*]}")
        say "$(t "installing bubblekit${list:+ with extras [$list]} into $VENV (first time: a minute or two)" "正在把 bubblekit${list:+（附加组件 [$list]）}装进 $VENV（第一次需要一两分钟）")"
        pip_install -e ".${list:+[$list]}"
    fi
    for x in "${missing[@]}"; do [ "$x" = lab ] && install_torch; done
    mkdir -p "$STAMPS"
    for x in "${missing[@]}"; do setup_key "$x" > "$STAMPS/$x"; done
    say "$(t "set-up done in $((SECONDS - started)) s" "配置完成，用时 $((SECONDS - started)) 秒")"
}

torch_pin() {  # the torch requirement of pyproject.toml's lab extra (torch==2.13.0)
    sed -n 's/^[[:space:]]*"\(torch==[^"]*\)".*/\1/p' pyproject.toml | head -n 1
}

install_torch() {  # torch, pinned, for lesson 06's real run; the CPU-only build on Linux without CUDA
    local pin index="${BUBBLEKIT_TORCH_INDEX:-}"
    pin=$(torch_pin)
    [ -n "$pin" ] || die "pyproject.toml's lab extra names no torch==VERSION"
    if [ -z "$index" ] && [ "$(uname -s)" = Linux ] && ! command -v nvidia-smi >/dev/null 2>&1; then
        # no CUDA here: PyPI's Linux torch carries CUDA (several GB); PyTorch's CPU index has the
        # same version without it, unless pip already finds a CPU build of it (a local wheel folder)
        local local_build  # (read whole: grep -q in a pipe would stop pip early, and pipefail fail the test)
        local_build=$("$VENV/bin/python" -m pip install --dry-run --no-index --no-deps --ignore-installed "$pin" \
                      2>/dev/null || true)
        case $local_build in
            *"Would install torch-"*"+cpu"*) index="" ;;
            *) index=https://download.pytorch.org/whl/cpu ;;
        esac
    fi
    if [ -n "$index" ]; then
        # an extra index: pip keeps the machine's own (a mirror) for everything else, and of the two
        # builds of the pinned version it takes the CPU one (2.13.0+cpu sorts after 2.13.0)
        say "$(t "installing $pin (CPU-only build, from $index) into $VENV" "正在把 $pin（仅 CPU 版，来自 $index）装进 $VENV")"
        pip_install "$pin" --extra-index-url "$index"
    else
        say "$(t "installing $pin into $VENV" "正在把 $pin 装进 $VENV")"
        pip_install "$pin"
    fi
}

jupyter_dirs() {  # Jupyter's and IPython's own state inside the venv (unless the caller chose a folder)
    mkdir -p "$VENV/var"
    export JUPYTERLAB_WORKSPACES_DIR="${JUPYTERLAB_WORKSPACES_DIR:-$VENV/var/lab-workspaces}"
    export IPYTHONDIR="${IPYTHONDIR:-$VENV/var/ipython}"
    if [ -z "${JUPYTER_RUNTIME_DIR:-}" ]; then
        # a kernel's socket is RUNTIME/kernel-<uuid>-ipc-<n>: its path must stay under 107 bytes
        local runtime="$VENV/var/run"
        if [ ${#runtime} -gt 50 ]; then
            runtime="${TMPDIR:-/tmp}/bubblekit-$(id -u)"
        fi
        export JUPYTER_RUNTIME_DIR="$runtime"
    fi
    mkdir -p "$JUPYTER_RUNTIME_DIR" && chmod 700 "$JUPYTER_RUNTIME_DIR"
}

COURSE_LANG=en   # --lang: en or zh
REST=()          # the other arguments (JupyterLab's options for `lab`)
parse_lang() {  # take --lang X / --lang=X out of the arguments
    REST=()
    while [ $# -gt 0 ]; do
        case $1 in
            --lang) [ $# -ge 2 ] || die "--lang needs a value: en or zh"; COURSE_LANG=$2; shift 2 ;;
            --lang=*) COURSE_LANG=${1#--lang=}; shift ;;
            *) REST+=("$1"); shift ;;
        esac
    done
    case $COURSE_LANG in
        en|zh) ;;
        zh-CN|zh_CN|zh-cn|zh_cn) COURSE_LANG=zh ;;
        *) die "unknown language '$COURSE_LANG' for --lang; choose en or zh" ;;
    esac
}

language_pack() {  # --lang zh: install the [zh] extra (JupyterLab's zh-CN language pack) once
    [ "$COURSE_LANG" = zh ] || return 0
    extra_ready zh && return 0
    if [ -n "${BUBBLEKIT_NO_INSTALL:-}" ]; then  # a shared ready environment: use it as it is
        "$VENV/bin/python" -c 'import jupyterlab_language_pack_zh_CN' 2>/dev/null \
            || say "JupyterLab 的中文语言包没有安装（设置了 BUBBLEKIT_NO_INSTALL）：菜单仍是英文"
        return 0
    fi
    say "正在把 JupyterLab 中文语言包（附加组件 [zh]）装进 $VENV"
    pip_install -e ".[zh]"
    mkdir -p "$STAMPS"
    setup_key zh > "$STAMPS/zh"
}

browser_font() {  # --lang zh: the browser needs a font for Chinese, or every character is an empty box
    [ "$COURSE_LANG" = zh ] || return 0
    "$VENV/bin/python" -m bubblekit.presentation.fonts --check-browser || true
}

lab_language() {  # JupyterLab's display language: a settings override inside the venv (zh), removed for en
    local dir="$VENV/share/jupyter/lab/settings/overrides.d"
    if [ "$COURSE_LANG" = zh ]; then
        mkdir -p "$dir"
        printf '%s\n' '{"@jupyterlab/translation-extension:plugin": {"locale": "zh_CN"}}' > "$dir/bubblekit-language.json"
    else
        rm -f "$dir/bubblekit-language.json"
    fi
    # the course's own settings: no "Would you like to get notified about official Jupyter news?"
    # toast and no update check (a classroom may be offline; the learner came for the lesson)
    mkdir -p "$dir"
    printf '%s\n' '{"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": false}}' \
        > "$dir/bubblekit-course.json"
}

jupyter_config() {  # keep the notebook-trust database inside the venv (read by every Jupyter app of the venv)
    mkdir -p "$VENV/etc/jupyter" "$VENV/share/jupyter"
    "$VENV/bin/python" - "$VENV" <<'PY'
import json, pathlib, re, sys
venv = pathlib.Path(sys.argv[1]).resolve()
path = venv / "etc" / "jupyter" / "jupyter_config.json"
config = json.loads(path.read_text()) if path.is_file() else {}
data = venv / "share" / "jupyter"
config["NotebookNotary"] = {"db_file": str(data / "nbsignatures.db"), "secret_file": str(data / "notebook_secret")}
text = json.dumps(config, indent=1, sort_keys=True) + "\n"
if not path.is_file() or path.read_text() != text:
    path.write_text(text)
# nbgrader (classroom assignments) finds the course's classroom/nbgrader from anywhere in this venv
course = pathlib.Path.cwd() / "classroom" / "nbgrader"
grader = venv / "etc" / "jupyter" / "nbgrader_config.py"
text = ("# Written by course.sh: nbgrader in this environment reads the course's classroom/nbgrader/nbgrader_config.py\n"
        "# first (a nbgrader_config.py in the folder nbgrader runs from comes after it).\n"
        f"load_subconfig('nbgrader_config.py', {str(course)!r})  # noqa: F821\n")
# ... only for the course this venv belongs to (its .venv), or while no other course's pointer stands: a
# command run from another copy of the course with this venv (BUBBLEKIT_VENV, as the tests do) must not
# re-point the learner's nbgrader at a folder that will be gone
own = venv.parent == pathlib.Path.cwd().resolve()
old = grader.read_text() if grader.is_file() else ""
stands = "load_subconfig(" in old and all(pathlib.Path(x).is_dir() for x in re.findall(r"load_subconfig\('nbgrader_config.py', '([^']*)'\)", old))
if (course / "nbgrader_config.py").is_file() and old != text and (own or not stands):
    grader.write_text(text)
# nbgrader's panels (Formgrader, Create Assignment, Validate) only where asked for (setup --nbgrader):
# a self-study learner's JupyterLab shows the course, not an instructor's tools
ui = (venv / ".bubblekit-nbgrader-ui").is_file()
server = {f"nbgrader.server_extensions.{x}": ui
          for x in ("formgrader", "validate_assignment", "assignment_list", "course_list")}
server["notebook_shim"] = False  # classic-notebook compatibility, unused here; it only printed a deprecation warning
config.setdefault("ServerApp", {})["jpserver_extensions"] = server
# jupyter_server's websockets ping every ws_ping_interval and wait ws_ping_timeout (default 3 x the
# interval), which tornado warns about at the first kernel ("websocket_ping_timeout ... cannot be
# longer than the websocket_ping_interval"): the same value for both says nothing
config["ServerApp"]["tornado_settings"] = {"ws_ping_interval": 30000, "ws_ping_timeout": 30000}
text = json.dumps(config, indent=1, sort_keys=True) + "\n"
if path.read_text() != text:
    path.write_text(text)
page = venv / "etc" / "jupyter" / "labconfig" / "page_config.json"
page.parent.mkdir(parents=True, exist_ok=True)
settings = json.loads(page.read_text()) if page.is_file() else {}
settings.setdefault("disabledExtensions", {})["@jupyter/nbgrader"] = not ui
text = json.dumps(settings, indent=1, sort_keys=True) + "\n"
if not page.is_file() or page.read_text() != text:
    page.write_text(text)
PY
}

setup_slides() {  # the optional "slides" extra: JupyterLab's RISE (live reveal.js slideshows of the lessons)
    "$VENV/bin/python" -c 'import jupyterlab_rise' 2>/dev/null && return 0
    say "$(t "installing the slides extra (jupyterlab-rise) into $VENV" "正在把幻灯片组件（jupyterlab-rise）装进 $VENV")"
    "$VENV/bin/python" -m pip install --quiet -e ".[slides]" 2>&1 \
        | { grep -v "is ignored: it is neither a file nor a directory" || true; }
}

make_workspace() {  # copy new exercises into workspace/ (and workspace/zh/ for --lang zh); never overwrites
    "$VENV/bin/python" -m bubblekit.course.workspace --root "$ROOT"
    if [ "$COURSE_LANG" = zh ]; then
        "$VENV/bin/python" -m bubblekit.course.workspace --root "$ROOT" --lang zh
    fi
}

trust_course() {  # trust the notebooks the course ships, unchanged, so their saved JavaScript outputs show
    local nbs=() nb
    while IFS= read -r nb; do nbs+=("$nb"); done < <(
        "$VENV/bin/python" - "$ROOT" <<'PY'
import sys
from pathlib import Path
from bubblekit.course.workspace import course_notebooks
for nb in course_notebooks(Path(sys.argv[1])):
    if not nb.changed:
        print(nb.path)
PY
    )
    [ ${#nbs[@]} -eq 0 ] && return 0
    local out
    out=$("$VENV/bin/jupyter" trust "${nbs[@]}" 2>&1) \
        || printf 'course.sh: could not mark the course notebooks as trusted (lesson 01 shows its animation once you run it):\n%s\n' "$out" >&2
}

print_address() {  # print_address RUNTIME_FILE START: once the server is up, one line with its address and token
    local file=$1
    for _ in $(seq 1 1200); do  # at most 10 minutes
        if [ -f "$file" ]; then
            "$VENV/bin/python" - "$file" "$2" <<'PY' && return 0
import json, sys, time, urllib.parse
for _ in range(20):  # the server writes the file in one go; a half-written one is read again
    try:
        info = json.load(open(sys.argv[1], encoding="utf-8"))
        break
    except ValueError:
        time.sleep(0.1)
else:
    sys.exit(1)
host = info.get("hostname") or "127.0.0.1"
if host in ("", "0.0.0.0", "::", "localhost", "127.0.0.1"):
    host = "127.0.0.1"
elif ":" in host:
    host = f"[{host}]"
scheme = "https" if info.get("secure") else "http"
base = info.get("base_url") or "/"
query = "reset" + (f"&token={urllib.parse.quote(info['token'])}" if info.get("token") else "")
url = f"{scheme}://{host}:{info['port']}{base}lab/tree/{urllib.parse.quote(sys.argv[2])}?{query}"
print(f"\033[1m==> open the course: {url}\033[0m", flush=True)
PY
        fi
        kill -0 "$$" 2>/dev/null || return 0  # the server stopped (or exited, not yet reaped: a zombie)
        if [ -r "/proc/$$/stat" ]; then read -r _ _ state _ < "/proc/$$/stat" || true; [ "${state:-}" != Z ] || return 0; fi
        sleep 0.5
    done
}

# ---------------------------------------------------------------------------- test

RESULTS=()   # "step status seconds"
FAILED=0
TOOL_PASSED=0   # checks that are not pytest runs (ruff, mypy, make_exercises) count as one test each
TOOL_FAILED=0
JUNIT_DIR=""

run_step() {  # run_step NAME COMMAND...: run, time and record one check; pytest exit 5 (nothing collected) counts as ok
    local name=$1; shift
    local started=$SECONDS rc=0
    say "$name: $*"
    "$@" || rc=$?
    local status=ok is_pytest=0
    [ "${1##*/}" = "python" ] && [ "${3:-}" = "pytest" ] && is_pytest=1
    if [ "$rc" -eq 5 ] && [ $is_pytest -eq 1 ]; then
        status="ok (no tests)"
    elif [ "$rc" -ne 0 ]; then
        status="FAILED (exit $rc)"; FAILED=1
    fi
    if [ $is_pytest -eq 0 ]; then
        if [ "$rc" -eq 0 ]; then TOOL_PASSED=$((TOOL_PASSED + 1)); else TOOL_FAILED=$((TOOL_FAILED + 1)); fi
    fi
    RESULTS+=("$(printf '%-10s %-18s %5d s' "$name" "$status" $((SECONDS - started)))")
}

existing() {  # print the arguments that exist
    local x
    for x in "$@"; do [ -e "$x" ] && printf '%s\n' "$x"; done
    return 0
}

notebooks() {  # the course's notebooks for nbval: shipped ones only; a changed one as shipped, from a copy in $1
    "$VENV/bin/python" -m bubblekit.course.workspace --root "$ROOT" --course-notebooks --export-changed "$1"
}

totals() {  # sum the JUnit files and the tool checks: "N passed, N failed, N skipped"
    "$VENV/bin/python" - "$JUNIT_DIR" "$TOOL_PASSED" "$TOOL_FAILED" <<'PY'
import sys, pathlib, xml.etree.ElementTree as ET
passed, failed, skipped = int(sys.argv[2]), int(sys.argv[3]), 0
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.xml")):
    root = ET.parse(path).getroot()
    for suite in ([root] if root.tag == "testsuite" else root.iter("testsuite")):
        tests, skips = int(suite.get("tests", 0)), int(suite.get("skipped", 0))
        bad = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        passed += tests - bad - skips; failed += bad; skipped += skips
print(f"{passed} passed, {failed} failed, {skipped} skipped")
PY
}

test_all() {
    export MPLBACKEND=Agg   # off-screen figures in tests (JupyterLab keeps its inline default)
    unset BUBBLEKIT_LANG    # each notebook sets its own language; the stored outputs assume so
    local steps
    if [ $# -gt 0 ]; then steps=("$@"); else steps=(lint types exercises unit browser notebooks); fi
    JUNIT_DIR=$(mktemp -d)
    trap 'rm -rf "$JUNIT_DIR"' EXIT
    local started=$SECONDS step
    for step in "${steps[@]}"; do
        case $step in
            lint)
                # shellcheck disable=SC2046  # the folder names have no spaces
                run_step lint "$VENV/bin/ruff" check $(existing bubblekit tests scripts benchmarks) ;;
            types)
                run_step types "$VENV/bin/mypy" bubblekit ;;
            exercises)
                run_step exercises "$VENV/bin/python" scripts/make_exercises.py --check ;;
            unit)
                run_step unit "$VENV/bin/python" -m pytest -p no:cacheprovider -q --junitxml="$JUNIT_DIR/unit.xml" \
                    -m "not browser" tests ;;
            browser)
                run_step browser "$VENV/bin/python" -m pytest -p no:cacheprovider -q --junitxml="$JUNIT_DIR/browser.xml" \
                    -m browser tests ;;
            notebooks)
                nbs=()
                mkdir -p "$JUNIT_DIR/shipped"
                while IFS= read -r nb; do nbs+=("$nb"); done < <(notebooks "$JUNIT_DIR/shipped")
                if [ ${#nbs[@]} -eq 0 ]; then
                    RESULTS+=("$(printf '%-10s %-18s %5d s' notebooks "ok (none)" 0)")
                else
                    run_step notebooks "$VENV/bin/python" -m pytest -p no:cacheprovider -q --rootdir="$ROOT" \
                        --junitxml="$JUNIT_DIR/notebooks.xml" --nbval --nbval-current-env \
                        --nbval-sanitize-with tests/nbval_sanitize.cfg --nbval-cell-timeout=900 "${nbs[@]}"
                fi ;;
            *) die "unknown check '$step'; choose from: lint types exercises unit browser notebooks" ;;
        esac
    done
    echo
    say "summary ($((SECONDS - started)) s)"
    printf '  %s\n' "${RESULTS[@]}"
    echo "tests: $(totals)"
    return $FAILED
}

usage() {
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
}

cmd=${1:-help}
[ $# -gt 0 ] && shift
case $cmd in
    setup)
        parse_lang "$@"
        extras=$LAB_EXTRAS torch=0
        for opt in ${REST[@]+"${REST[@]}"}; do  # check every option before setting anything up
            case $opt in
                --torch) torch=1 ;;
                --classroom) extras+=",classroom" ;;
                --nbgrader) extras+=",nbgrader" ;;
                --slides|--no-nbgrader) ;;
                *) die "unknown setup option '$opt'; choose from --lang en|zh --torch --classroom --slides --nbgrader --no-nbgrader" ;;
            esac
        done
        [ $torch = 1 ] && extras+=",lab"
        setup "$extras"
        for opt in ${REST[@]+"${REST[@]}"}; do
            case $opt in
                --slides) setup_slides ;;
                --nbgrader) touch "$VENV/.bubblekit-nbgrader-ui" ;;
                --no-nbgrader) rm -f "$VENV/.bubblekit-nbgrader-ui" ;;
            esac
        done
        language_pack
        jupyter_config
        lab_language
        browser_font
        make_workspace
        trust_course ;;
    lab)
        parse_lang "$@"
        set -- ${REST[@]+"${REST[@]}"}
        setup "$LAB_EXTRAS"
        language_pack
        jupyter_config
        lab_language
        browser_font
        make_workspace
        trust_course
        jupyter_dirs
        start=notebooks/00_start_here.ipynb workspace=workspace/
        if [ "$COURSE_LANG" = zh ]; then
            start=notebooks/zh/00_start_here.ipynb workspace=workspace/zh/
            if [ ! -f "$start" ]; then  # the Chinese lesson 00 is not translated yet: open the Chinese lessons' folder
                start=notebooks/zh
                say "中文的第 00 课还没有：改为打开 notebooks/zh/ 里的中文课程"
            fi
        fi
        say "$(t "opening JupyterLab on this folder at $start; your exercises are in $workspace (Ctrl-C to stop)" "在这个目录打开 JupyterLab，从 $start 开始；你的练习在 $workspace（按 Ctrl-C 停止）")"
        # Serve the course folder (lessons, workspace/, exercises/, solutions/, apps/), open lesson 00
        # alone (?reset: the tabs of an earlier session are not reopened). Kernels talk over local
        # sockets (ipc), not TCP, and only warnings reach the terminal (server extensions that are
        # off: see jupyter_config), so the address is printed here, once the server has written it
        # (its runtime file jpserver-PID.json; exec keeps this shell's PID). http://host:port/ opens
        # lesson 00 too.
        lab_args=(--ServerApp.root_dir="$ROOT" --LabApp.default_url="/lab/tree/$start?reset"
                  --ServerApp.log_level=WARN --LabApp.log_level=WARN
                  --KernelManager.transport=ipc)
        [ "$(id -u)" = 0 ] && lab_args+=(--allow-root)  # containers often run as root
        print_address "$JUPYTER_RUNTIME_DIR/jpserver-$$.json" "$start" &
        exec "$VENV/bin/jupyter" lab "${lab_args[@]}" "$@" ;;
    test)
        setup "$TEST_EXTRAS,lab"
        # the Chinese browser test (tests/test_browser_zh.py) needs JupyterLab's zh-CN language pack; only
        # the pack: JupyterLab's display language (the override of `lab --lang zh`) is left as it is
        COURSE_LANG=zh
        language_pack
        test_all "$@" ;;
    lite)
        # the no-install edition: a static JupyterLite site in _site/ (scripts/build_lite.py says what is in it)
        parse_lang "$@"
        command -v npm >/dev/null 2>&1 \
            || die "$(t "npm is needed to fetch Pyodide's core files (Debian/Ubuntu: apt-get install npm)" "需要 npm 来下载 Pyodide 的核心文件（Debian/Ubuntu：apt-get install npm）")"
        # a build environment of its own (in .lite-cache/, never the course's .venv): JupyterLite's packages
        # carry JupyterLab extensions that the course's JupyterLab and Voila must not load
        VENV=${BUBBLEKIT_LITE_VENV:-$ROOT/.lite-cache/venv}
        STAMPS="$VENV/.bubblekit-setup.d"
        setup "lite"
        "$VENV/bin/python" scripts/build_lite.py ${REST[@]+"${REST[@]}"}
        say "$(t "serve it: python -m http.server -d _site, then open http://127.0.0.1:8000/ (lessons in notebooks/, the Chinese ones in notebooks/zh/)" "启动服务：python -m http.server -d _site，然后打开 http://127.0.0.1:8000/（课程在 notebooks/，中文版在 notebooks/zh/）")" ;;
    help|-h|--help) usage ;;
    *) usage; die "unknown command '$cmd'" ;;
esac
