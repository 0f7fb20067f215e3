"""The viewer in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``) driven by Selenium draws the thread list, a thread with its diffs, the
items of a turn committed while the page is open (no reload), and a hostile thread whose text
runs no script."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("selenium", reason="Selenium is not installed (the test extra has it)")

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from acp_adapters.wire import wire_snapshot

from .serving import ROOT, edit_turn, hostile_store, served, served_with_prompts, stored

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")

pytestmark = pytest.mark.skipif(
    CHROMIUM is None or DRIVER is None,
    reason="no headless Chromium here (Debian: apt-get install chromium chromium-driver)",
)


@pytest.fixture
def browser() -> Iterator[Any]:
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(argument)
    options.binary_location = CHROMIUM
    try:
        driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    except WebDriverException as error:
        pytest.skip(f"Chromium does not start here: {error.msg}")
    try:
        yield driver
    finally:
        driver.quit()


def _until(driver: Any, found: Callable[[Any], Any], seconds: float = 20) -> Any:
    return WebDriverWait(driver, seconds).until(found)


def _texts(driver: Any, selector: str) -> list[str]:
    return [node.text for node in driver.find_elements(By.CSS_SELECTOR, selector)]


def test_the_list_and_a_thread_drawn_with_its_diffs(db: Path, browser: Any) -> None:
    with served(db) as port:
        browser.get(f"http://127.0.0.1:{port}/")
        link = _until(browser, lambda d: d.find_element(By.LINK_TEXT, "t"))
        cells = _texts(browser, "#threads tbody td")
        assert (cells[0], cells[3], cells[5]) == ("t", "1", "completed")
        link.click()
        _until(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".file_change .diff .line-add"))
        assert browser.current_url.endswith("/threads/" + stored(db)[0])
        assert any(text.startswith("--- ") for text in _texts(browser, ".diff .file"))
        assert _texts(browser, ".diff .hunk")
        stats = [text.replace(" ", "") for text in _texts(browser, ".file_change .stats")]
        assert stats
        assert all(re.fullmatch(r"\+[0-9]+-[0-9]+", text) for text in stats), stats
        assert "edit" in _texts(browser, ".user_message .text")
        fold = browser.find_element(By.CSS_SELECTOR, ".turn-patch summary")
        assert fold.text == "turn 1: the whole patch"
        fold.click()
        _until(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".turn-patch .diff .line-add"))
        files = _texts(browser, ".turn-patch .diff .file")
        assert len([text for text in files if text.startswith("+++ ")]) == 2, files


def test_a_live_thread_grows_without_reload(db: Path, workspace: Path, browser: Any) -> None:
    with served(db) as port:
        browser.get(f"http://127.0.0.1:{port}/threads/t")
        _until(browser, lambda d: "live" in d.find_element(By.ID, "status").text)
        browser.execute_script("window.notReloaded = true;")
        edit_turn(db, workspace, "say hello live")
        _until(
            browser,
            lambda d: "you said: say hello live" in " ".join(_texts(d, ".assistant_message .text")),
        )
        assert browser.execute_script("return window.notReloaded") is True


def test_a_hostile_thread_runs_no_script(tmp_path: Path, browser: Any) -> None:
    path = tmp_path / "hostile.db"
    thread_id = hostile_store(path)
    with served(path) as port:
        browser.get(f"http://127.0.0.1:{port}/")
        _until(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#threads tbody tr"))
        browser.get(f"http://127.0.0.1:{port}/threads/{thread_id}")
        _until(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".file_change .diff .line-add"))
        assert browser.execute_script("return window.pwned") is None
        assert browser.find_elements(By.TAG_NAME, "img") == []
        assert len(browser.find_elements(By.TAG_NAME, "script")) == 1
        assert "<script>" in " ".join(_texts(browser, ".user_message .text"))
        assert browser.title.startswith("acp-adapters: <script>")


def test_the_page_queues_a_prompt_with_the_token_only_when_allowed(db: Path, browser: Any) -> None:
    from acp_adapters.store.open import open_store

    with served(db) as port:
        browser.get(f"http://127.0.0.1:{port}/threads/t")
        _until(browser, lambda d: "live" in d.find_element(By.ID, "status").text)
        assert not browser.find_element(By.ID, "prompt").is_displayed()
    with served_with_prompts(db) as (port, token):
        browser.get(f"http://127.0.0.1:{port}/threads/t")
        form = _until(browser, lambda d: d.find_element(By.ID, "prompt").is_displayed() and d)
        form.find_element(By.ID, "prompt-text").send_keys("from the browser")
        form.find_element(By.ID, "prompt-token").send_keys("wrong")
        form.find_element(By.CSS_SELECTOR, "#prompt button").click()
        _until(browser, lambda d: "token" in d.find_element(By.ID, "prompt-status").text)
        field = browser.find_element(By.ID, "prompt-token")
        field.clear()
        field.send_keys(token)
        browser.find_element(By.CSS_SELECTOR, "#prompt button").click()
        _until(browser, lambda d: "queued" in d.find_element(By.ID, "prompt-status").text)

    async def queued() -> list[Any]:
        async with await open_store(db, create=False) as store:
            thread = await store.thread_named("t")
            assert thread is not None
            return [p.prompt for p in await store.queued_prompts(thread.id)]

    assert anyio.run(queued) == [[{"type": "text", "text": "from the browser"}]]


def test_the_first_paint_of_a_ten_turn_thread_ships_the_gzipped_snapshot_and_the_assets(
    db: Path, workspace: Path, browser: Any
) -> None:
    for turn in range(2, 11):
        edit_turn(db, workspace, f"say turn {turn}")
    thread_id, items = stored(db)
    assets = ROOT / "framework" / "acp_adapters" / "viewer" / "assets"
    with served(db) as port:
        browser.get(f"http://127.0.0.1:{port}/threads/{thread_id}")
        _until(browser, lambda d: d.execute_script(MARK))
        first_item = browser.execute_script(MARK)
        entries = browser.execute_script(ENTRIES)
        row = _get_row(port, thread_id)
    by_path = {e["name"].split(str(port), 1)[1]: e for e in entries}
    paint = [f"/threads/{thread_id}", "/assets/viewer.js", "/assets/viewer.css"]
    paint += [f"/api/threads/{thread_id}", f"/api/threads/{thread_id}/snapshot"]
    shipped = sum(by_path[path]["encodedBodySize"] for path in paint)
    snapshot = gzip.compress(json.dumps(wire_snapshot(items), ensure_ascii=False).encode())
    # The page's own files, each as it may be sent: gzip'd, or as it is when that is smaller.
    own = sum(
        min(len(data), len(gzip.compress(data)))
        for data in ((assets / name).read_bytes() for name in ASSET_NAMES)
    )
    sent = {path: by_path[path]["encodedBodySize"] for path in paint}
    assert sent[f"/api/threads/{thread_id}/snapshot"] <= len(snapshot) + 64, sent
    assert shipped <= len(snapshot) + own + len(row) + 5 * 64, (sent, len(snapshot), own)
    assert first_item < 5000
    print(
        f"\n10 turns, {len(items)} items: page {own} B gzip'd, snapshot {len(snapshot)} B "
        f"gzip'd, first paint {shipped} B, first item at {first_item:.0f} ms"
    )


MARK = (
    'const m = performance.getEntriesByName("acp-first-item"); '
    "return m.length ? m[0].startTime : null;"
)
ENTRIES = (
    "return [performance.getEntriesByType('navigation')[0], "
    "...performance.getEntriesByType('resource')].map(e => "
    "({name: e.name, encodedBodySize: e.encodedBodySize, decodedBodySize: e.decodedBodySize}));"
)
ASSET_NAMES = ["thread.html", "viewer.js", "viewer.css"]


def _get_row(port: int, thread_id: str) -> bytes:
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", f"/api/threads/{thread_id}")
        return connection.getresponse().read()
    finally:
        connection.close()
