"""The viewer in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``) driven by Selenium draws the thread list, a thread with its diffs, the
items of a turn committed while the page is open (no reload), and a hostile thread whose text
runs no script."""

from __future__ import annotations

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

from .serving import edit_turn, hostile_store, served, served_with_prompts, stored

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
