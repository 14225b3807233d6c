"""Headless Debian Chromium for report tests: render a page offline, dump its DOM, screenshot it."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--enable-logging=stderr",
    "--v=0",
]
# Console messages reach stderr as `...:CONSOLE(line)] "message", source: ...` lines.
ERROR_HOOK = (
    "<script>window.__errors=[];window.addEventListener('error',e=>window.__errors.push(String(e.message)));"
    "console.error=(...a)=>window.__errors.push(a.join(' '));"
    "window.addEventListener('load',()=>{document.body.dataset.errors=window.__errors.length;"
    "document.body.dataset.renderMs=Math.round(performance.now());});</script>"
)


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def render(page: Path, work: Path, width: int = 1366, height: int = 900) -> dict:
    """Open `page` with an error hook added: the DOM after load, console lines, a screenshot, time."""
    hooked = work / "hooked.html"
    hooked.write_text(page.read_text().replace("<head>", "<head>" + ERROR_HOOK, 1))
    profile = work / "profile"
    base = [chromium(), *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"]
    started = time.monotonic()
    dom = subprocess.run([*base, "--dump-dom", hooked.as_uri()], capture_output=True, text=True, timeout=120)
    seconds = time.monotonic() - started
    shot = work / "screenshot.png"
    subprocess.run([*base, f"--screenshot={shot}", hooked.as_uri()], capture_output=True, timeout=120)
    console = [line for line in (dom.stderr or "").splitlines() if ":CONSOLE" in line]
    return {"dom": dom.stdout, "console": console, "screenshot": shot, "seconds": seconds}


def pixel_spread(png: Path) -> float:
    """Standard deviation of the screenshot's grey levels (0 for a blank page)."""
    import io

    import numpy as np
    from PIL import Image

    image = Image.open(io.BytesIO(png.read_bytes())).convert("L")
    return float(np.asarray(image, dtype=np.float64).std())
