"""Release binaries are built one way, scripts/build-release.sh, wherever
they are built to run, to be measured or to ship: scripts/run.sh, the
benchmarks, leak-check and compose/Dockerfile. A plain `swift build -c
release` elsewhere would measure a binary other than the one that ships
(docs/PERFORMANCE.md, "Idle RSS") and rebuild .build/release with other
flags each time the two alternate."""
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD_RELEASE = "scripts/build-release.sh"


def tracked_build_files():
    """Every tracked shell script and Dockerfile, as paths relative to ROOT."""
    listed = subprocess.run(["git", "ls-files", "*.sh", "*Dockerfile"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [path for path in listed.stdout.split() if (ROOT / path).is_file()]


def test_no_release_build_bypasses_the_script():
    release_build = re.compile(r"swift\s+build\b[^\n]*(-c|--configuration)[\s=]+release\b")
    files = tracked_build_files()
    assert "scripts/run.sh" in files and "compose/Dockerfile" in files, files
    offenders = [path for path in files if path != BUILD_RELEASE and release_build.search((ROOT / path).read_text())]
    assert offenders == [], f"build release binaries with {BUILD_RELEASE}: {offenders}"


def test_the_script_links_the_swift_runtime_statically_with_packed_relocations():
    script = (ROOT / BUILD_RELEASE).read_text()
    command = script[script.index("exec swift build"):]
    for flag in ["-c release", "--static-swift-stdlib", "-use-ld=lld", "pack-relative-relocs", '"$@"']:
        assert flag in command, f"{BUILD_RELEASE} lost {flag}"


def test_run_sh_and_the_image_build_through_the_script():
    assert "scripts/build-release.sh" in (ROOT / "scripts/run.sh").read_text()
    dockerfile = (ROOT / "compose/Dockerfile").read_text()
    for binary in ["PointsService", "PaymentsService", "Gateway"]:
        assert f"scripts/build-release.sh --product {binary}" in dockerfile, binary
        assert f".build/release/{binary}" in dockerfile, binary
