// The browser's own notifications when something new waits for the signed-in person. Opt-in: the
// start page's button asks the browser's permission; after that, every signed-in page of this
// browser asks the server for "Waiting for me" (/inbox/waiting) on load and every 30 seconds, and
// shows a notification for each item it has not seen before (clicking it opens where to decide).
// What was already there when the person opted in is not news. Nothing leaves this server.
"use strict";
(function () {
  var ON = "signoff-notify", SEEN = "signoff-notify-seen", EVERY = 30000;
  var supported = "Notification" in window;

  function enabled() {
    return supported && Notification.permission === "granted" && localStorage.getItem(ON) === "on";
  }
  function keyOf(w) { return w.id; }  // the same item from one look to the next

  function look(quiet) {
    return fetch("/inbox/waiting", {credentials: "same-origin", headers: {"Accept": "application/json"}})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) {
        if (!data) { return; }
        var seen = JSON.parse(localStorage.getItem(SEEN) || "[]");
        data.items.forEach(function (w) {
          if (quiet || seen.indexOf(keyOf(w)) >= 0) { return; }
          var n = new Notification("signoff: a " + w.kind + " waits for you", {body: w.title, tag: keyOf(w)});
          n.onclick = function () { window.focus(); window.location.href = w.href; };
        });
        localStorage.setItem(SEEN, JSON.stringify(data.items.map(keyOf)));
        var menu = document.getElementById("menu-waiting");
        if (menu) { menu.textContent = String(data.count); }
      })
      .catch(function () { /* offline or signed out: the next look tries again */ });
  }

  function say(text) {
    var status = document.getElementById("notify-status");
    if (status) { status.textContent = text; }
  }

  function setUp() {
    var button = document.getElementById("notify-toggle");
    if (button) {
      if (!supported) {
        say("This browser cannot show notifications.");
      } else {
        button.hidden = false;
        button.textContent = enabled() ? "Stop notifying me in this browser" : "Notify me in this browser";
        say(enabled() ? "This browser notifies you when something new waits." : "");
        button.addEventListener("click", function () {
          if (enabled()) {
            localStorage.setItem(ON, "off");
            button.textContent = "Notify me in this browser";
            say("Notifications are off in this browser.");
            return;
          }
          Notification.requestPermission().then(function (answer) {
            if (answer !== "granted") { say("The browser did not allow notifications."); return; }
            localStorage.setItem(ON, "on");
            button.textContent = "Stop notifying me in this browser";
            say("This browser notifies you when something new waits.");
            look(true);  // what waits now is not news
          });
        });
      }
    }
    if (enabled()) {
      look(false);
      window.setInterval(function () { look(false); }, EVERY);
    }
  }

  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", setUp); } else { setUp(); }
})();
