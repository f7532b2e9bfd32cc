// The play page's service worker (docs/notifications.md, Web Push): shows what the gateway pushes to a
// seat's browser while its tab is closed ("your turn", a reminder before the clock runs out, the match's
// end), and opens the table when the notification is clicked. Served at /play/sw.js, so its scope is /play/
// (push.js registers it so): it controls no page, it only shows notifications.
// A message is {type, id, timestamp, data: {table_id, match_id, seat, seq?, deadline?}}, decrypted by the
// browser; it carries nothing private (no hand), and its id is the same when the gateway sends it again.
"use strict";

const TEXTS = {
  en: {
    "your-turn": ["Your turn", "Your opponents have moved: it is your turn."],
    reminder: ["Your clock is running", (m) => `Move before ${m}, or your time runs out.`],
    "match-over": ["The match is over", "See how it ended."],
  },
  ru: {
    "your-turn": ["Ваш ход", "Соперники сходили: ваш ход."],
    reminder: ["Ваши часы идут", (m) => `Сходите до ${m}, иначе время выйдет.`],
    "match-over": ["Матч окончен", "Посмотрите, чем он закончился."],
  },
};

function texts() {
  const chosen = (self.navigator.language || "en").slice(0, 2).toLowerCase();
  return TEXTS[chosen] || TEXTS.en;
}

self.addEventListener("push", (event) => {
  let message;
  try { message = event.data.json(); } catch { return; }
  const said = texts()[message.type];
  if (!said) return;
  const data = message.data || {};
  const when = data.deadline ? new Date(data.deadline * 1000).toLocaleString(self.navigator.language) : "";
  const body = typeof said[1] === "function" ? said[1](when) : said[1];
  // one notification per match: a newer one replaces the last (and a message pushed twice shows once)
  event.waitUntil(self.registration.showNotification(said[0], {
    body, tag: `domino-${data.match_id}`, renotify: message.type !== "match-over",
    data: { url: `/play?table=${encodeURIComponent(data.table_id || "")}` },
  }));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = event.notification.data?.url || "/play";
  event.waitUntil((async () => {
    const open = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
    const tab = open.find((c) => new URL(c.url).pathname === "/play");
    if (tab) { await tab.focus(); return tab.navigate(url).catch(() => null); }
    return self.clients.openWindow(url);
  })());
});
