// Web Push for a seat (docs/notifications.md, Web Push): once the person agrees (asked once, on their
// click: a browser refuses a prompt nobody asked for), the browser's push subscription is registered with
// the seat's credential (PUT /v1/matches/{id}/push), and a closed tab then hears "your turn", a reminder
// before its clock runs out, and the match's end (sw.js shows them). No framework, no build step.
//
// play.js calls offerPush(button, matchId, credential, t) whenever a seat's match starts (a table's first
// match, or one dealt by "play again"): the button is shown only while there is something to ask, and a
// browser that already agreed registers the new match's subscription without asking again.

const ASKED = "domino-push";          // localStorage: "on" (agreed), "off" (refused): never asked again
const WORKER = "/play/sw.js";
const SCOPE = "/play/";

function supported() {
  return "serviceWorker" in navigator && "PushManager" in window && "Notification" in window && window.isSecureContext;
}

function bytes(base64url) {
  const text = atob(base64url.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (base64url.length % 4)) % 4));
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

// The gateway's VAPID public key, or null when it sends no Web Push.
async function serverKey() {
  const reply = await fetch("/v1/push/key");
  if (!reply.ok) return null;
  return (await reply.json()).key;
}

// The worker registered and active. (Not `navigator.serviceWorker.ready`: the page, /play, is outside the
// worker's scope /play/, so `ready` would never settle; a push subscription needs only an active worker.)
async function registered() {
  const registration = await navigator.serviceWorker.register(WORKER, { scope: SCOPE });
  const worker = registration.installing || registration.waiting || registration.active;
  if (worker && worker.state !== "activated") {
    await new Promise((resolve) => worker.addEventListener("statechange", () => {
      if (worker.state === "activated" || worker.state === "redundant") resolve();
    }));
  }
  return registration;
}

async function subscription(key) {
  const registration = await registered();
  const held = await registration.pushManager.getSubscription();
  if (held) return held;
  return registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: bytes(key) });
}

async function register(matchId, credential, key) {
  const sub = await subscription(key);
  const reply = await fetch(`/v1/matches/${encodeURIComponent(matchId)}/push`, {
    method: "PUT", body: JSON.stringify(sub.toJSON()),
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${credential}` },
  });
  if (!reply.ok) throw new Error(((await reply.json().catch(() => ({}))).detail) || `HTTP ${reply.status}`);
}

// Offer notifications for the seat's match `matchId` (button: the page's "notify me" button; t: its
// translations, keys push.ask, push.on, push.off, push.failed).
export async function offerPush(button, matchId, credential, t) {
  if (!button) return;
  button.hidden = true;
  if (!supported() || !matchId || !credential) return;
  const key = await serverKey().catch(() => null);
  if (!key) return;
  const asked = localStorage.getItem(ASKED);
  if (asked === "off" || Notification.permission === "denied") return;
  if (asked === "on" && Notification.permission === "granted") {
    register(matchId, credential, key).catch((err) => console.warn("push:", err));
    return;
  }
  button.textContent = t("push.ask");
  button.disabled = false;
  button.hidden = false;
  button.onclick = async () => {
    button.disabled = true;
    const answer = await Notification.requestPermission();
    localStorage.setItem(ASKED, answer === "granted" ? "on" : "off");
    if (answer !== "granted") { button.textContent = t("push.off"); return; }
    try {
      await register(matchId, credential, key);
      button.textContent = t("push.on");
    } catch (err) {
      localStorage.removeItem(ASKED);   // asked again next time
      button.textContent = t("push.failed", err.message);
      button.disabled = false;
    }
  };
}
