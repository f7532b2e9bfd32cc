"""The play page's service worker (api_gateway/play/sw.js, docs/notifications.md "Web Push") in Debian's
chromium driven by Playwright, served by a real gateway: registered at /play/sw.js with the scope /play/
from the page at /play, and a push message in the gateway's form (as the push service test decrypts it,
tests/gateway/test_webpush.py) shown as a notification, in the browser's language. The push message is
handed to the worker by the DevTools protocol (ServiceWorker.deliverPushMessage): a headless browser here
reaches no real push service."""
from __future__ import annotations

import contextlib
import json
from typing import Any

from playwright.sync_api import Browser

from .conftest import Gateway, wait_for
from .test_play_browser import browser  # noqa: F401 - the one chromium of the browser tests

Json = dict[str, Any]


REGISTER = """async () => {
  const r = await navigator.serviceWorker.register('/play/sw.js', {scope: '/play/'});
  const w = r.installing || r.waiting || r.active;
  if (w.state !== 'activated') await new Promise((ok) => w.addEventListener('statechange', () => w.state === 'activated' && ok()));
  return r.scope;
}"""
SHOWN = """async () => {
  const r = await navigator.serviceWorker.getRegistration('/play/');
  return (await r.getNotifications()).map((n) => ({title: n.title, body: n.body, tag: n.tag, data: n.data}));
}"""


def shown_after_push(browser: Browser, gateway: Gateway, locale: str,  # noqa: F811
                     message: Json) -> list[Json]:
    context = browser.new_context(locale=locale)
    try:
        context.grant_permissions(["notifications"], origin=gateway.url)
        page = context.new_page()
        page.set_default_timeout(15000)
        page.goto(gateway.url + "/play")
        devtools = context.new_cdp_session(page)
        registrations: list[Json] = []
        devtools.on("ServiceWorker.workerRegistrationUpdated", lambda e: registrations.extend(e["registrations"]))
        devtools.send("ServiceWorker.enable")
        assert page.evaluate(REGISTER) == gateway.url + "/play/"
        # Playwright's sync API hands the DevTools events over only while one of its calls waits: a sleeping
        # wait_for would never see an event that came after REGISTER returned (a CI run failed so)
        found = wait_for(lambda: page.wait_for_timeout(20) or [r for r in registrations
                                                               if r["scopeURL"] == gateway.url + "/play/"],
                         timeout=10)
        push = {"origin": gateway.url, "registrationId": found[0]["registrationId"], "data": json.dumps(message)}
        # Pushed again every 5 s until shown, as a push service retries: on a loaded machine a CI run saw none
        # within 10 s of one push. The worker shows one notification per match (its tag), so a message pushed
        # twice still shows once, and the assertions below see each push's notification exactly.
        for _ in range(6):
            devtools.send("ServiceWorker.deliverPushMessage", push)
            with contextlib.suppress(AssertionError):
                shown: list[Json] = wait_for(lambda: page.evaluate(SHOWN), timeout=5)
                return shown
        raise AssertionError("no notification within 30 s of six pushes")
    finally:
        context.close()


def test_the_service_worker_shows_a_pushed_turn_and_opens_its_table(browser: Browser,  # noqa: F811
                                                                    gateway: Gateway) -> None:
    message = {"type": "your-turn", "id": "msg_0f", "timestamp": "2026-12-06T05:00:00Z",
               "data": {"table_id": "9f0c", "match_id": "5d2e", "seat": 1, "seq": 12}}
    assert shown_after_push(browser, gateway, "en-US", message) == [
        {"title": "Your turn", "body": "Your opponents have moved: it is your turn.", "tag": "domino-5d2e",
         "data": {"url": "/play?table=9f0c"}}]


def test_a_reminder_is_shown_in_the_browsers_language(browser: Browser, gateway: Gateway) -> None:  # noqa: F811
    message = {"type": "reminder", "id": "msg_1a", "timestamp": "2026-12-06T05:00:00Z",
               "data": {"table_id": "9f0c", "match_id": "5d2e", "seat": 1, "seq": 12, "deadline": 1796533200}}
    shown = shown_after_push(browser, gateway, "ru-RU", message)
    assert [(n["title"], n["tag"]) for n in shown] == [("Ваши часы идут", "domino-5d2e")]
    assert shown[0]["body"].startswith("Сходите до ") and "2026" in shown[0]["body"]
