"""A page on another site cannot drive the device, even with pairing off (issue 22 item 5).

The attacker's page is served by a plain HTTP server of the test on another loopback port —
another origin than the gateway's, on loopback so Chromium's own private-network rules play no
part: only the gateway's checks stand between the page and the relay. It tries a ``no-cors`` POST with a ``text/plain`` JSON body (a "simple" request that
needs no preflight), a form-encoded one, the emergency stop without a body, and a WebSocket
chat.
"""

from __future__ import annotations

import http.server
import json
import threading
from typing import Any

import httpx
import pytest

from clawseed_edge.testing.hardware import pin_level

from .conftest import CONFIG, GatewayThread

pytestmark = pytest.mark.slow

GATEWAY_CONFIG = CONFIG.replace("[gateway]\n", "[gateway]\nrequire_pairing = false\n").replace(
    'level = "supervised"', 'level = "full"'
)

ATTACK = """<!doctype html><title>cute cats</title><script>
const target = %(target)s;
const results = {};
async function attack() {
  if (location.search === "?stop") {
    try {
      await fetch(target + "/api/estop", {method: "POST", mode: "no-cors"});
      results.estop = "sent";
    } catch (e) { results.estop = "failed: " + e; }
    window.attackDone = true;
    return;
  }
  for (const [name, type] of [["plain", "text/plain"], ["form", "application/x-www-form-urlencoded"]]) {
    try {
      await fetch(target + "/api/peripherals/pump", {method: "POST", mode: "no-cors",
        headers: {"Content-Type": type}, body: JSON.stringify({on: true})});
      results[name] = "sent";
    } catch (e) { results[name] = "failed: " + e; }
  }
  await new Promise((resolve) => {
    const ws = new WebSocket(target.replace("http", "ws") + "/ws/chat");
    ws.onopen = () => { results.ws = "open"; ws.send(JSON.stringify({type: "message", content: "pump on"})); };
    ws.onclose = (e) => { results.wsClose = e.code; resolve(); };
    setTimeout(resolve, 5000);
  });
  window.attackDone = true;
}
attack();
</script>"""


def test_a_page_on_another_origin_switches_nothing(browser: Any, gateway: GatewayThread) -> None:
    assert "require_pairing = false" in GATEWAY_CONFIG and 'level = "full"' in GATEWAY_CONFIG
    gpio = gateway.service.runtime.peripherals[0]
    # A client that is not a browser (no Origin, JSON) may: the LED is on before the attack,
    # so an emergency stop let through would show as the LED going off.
    lit = httpx.post(f"{gateway.url}/api/peripherals/red_led", json={"on": True}, timeout=10)
    assert lit.status_code == 200, lit.text
    body = (ATTACK % {"target": json.dumps(gateway.url)}).encode()

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    context = browser.new_context()
    page = context.new_page()
    site = f"http://127.0.0.1:{server.server_address[1]}/cats.html"
    try:
        page.goto(site)
        page.wait_for_function("window.attackDone === true", timeout=15000)
        results = page.evaluate("results")
        level = gateway.call(lambda: pin_level(gpio, "pump"))
        page.goto(site + "?stop")
        page.wait_for_function("window.attackDone === true", timeout=15000)
        results.update(page.evaluate("results"))
    finally:
        context.close()
        server.shutdown()
        server.server_close()
    led = gateway.call(lambda: pin_level(gpio, "red_led"))
    assert results["plain"] == "sent" and results["form"] == "sent", results
    assert results["estop"] == "sent", results
    assert level == 0, f"the pump was switched by another site: {results}"
    assert results.get("ws") != "open", "a WebSocket from another site was let in"
    assert led == 1, "an emergency stop from another site was let in"
