// The reporter's tracking page. The capability is in the fragment (#cap=...), which the browser
// never sends; it goes to the desk's API as the X-Desk-Capability header. Everything shown is
// added as text.
"use strict";
(function () {
  var root = document.getElementById("track");
  var report = root.getAttribute("data-report");
  var cap = new URLSearchParams(window.location.hash.slice(1)).get("cap");
  var status = document.getElementById("track-status");
  var STATES = {
    reproducing: "We are reproducing the bug with a test that must fail on the current code.",
    awaiting_reporter: "We reproduced the bug. Please tell us whether it is the bug you saw.",
    fixing: "The reproduction was confirmed; a fix is being prepared.",
    in_review: "A fix is waiting for a person to review it.",
    merged: "The fix was merged. It is not released yet.",
    released: "The fix is released. Please tell us whether it works for you.",
    verified: "The fix was confirmed to work.",
    needs_human: "A person needs to look at this bug; we will come back to you.",
    reopened: "The bug was reopened."
  };
  var QUESTIONS = {
    reproduction: ["Is this the bug you saw?", "confirm"],
    release: ["Does it work for you?", "verify"]
  };
  var current = null;

  function text(id, value) { document.getElementById(id).textContent = value; }
  function show(id, on) { document.getElementById(id).hidden = !on; }

  function problem(body, fallback) {
    if (body && body.quarantined) {
      return "Your reason could not be accepted: parts of it read as instructions to software (" +
        body.families.join(", ").replace(/_/g, " ") + "). Describe what happens, in your own words.";
    }
    if (body && body.detail) { return body.detail + (body.fix ? " What to do: " + body.fix : ""); }
    return fallback;
  }

  function call(method, path, payload) {
    var init = { method: method, headers: { "X-Desk-Capability": cap, "Accept": "application/json" },
                 credentials: "omit" };
    if (payload) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(payload); }
    return fetch(path, init).then(function (r) {
      return r.json().catch(function () { return null; }).then(function (body) { return { ok: r.ok, body: body }; });
    });
  }

  function render(t) {
    current = t;
    text("track-title", t.title);
    text("track-state", (STATES[t.state] || t.state) + " (bug " + t.bug_id + ", round " + t.round + ")");
    show("track-test", !!t.test);
    if (t.test) {
      text("test-words", "We wrote the test " + t.test.path + ". On the current code it fails with: " +
        (t.test.message || "(no message)"));
      text("test-source", t.test.source);
    }
    var q = t.question && QUESTIONS[t.question];
    show("track-question", !!q);
    if (q) { text("question-title", q[0]); text("question-legend", q[0]); }
    var list = document.getElementById("track-notices");
    list.textContent = "";
    t.notices.forEach(function (n) {
      var li = document.createElement("li");
      li.textContent = n.text;
      list.appendChild(li);
    });
    if (!t.notices.length) { list.appendChild(document.createElement("li")).textContent = "None yet."; }
    show("track-view", true);
    status.textContent = "";
  }

  function load() {
    return call("GET", "/desk/track/" + encodeURIComponent(report)).then(function (r) {
      if (!r.ok) {
        show("track-view", false);
        status.textContent = problem(r.body, "This tracking link could not be read.");
        status.className = "refusal";
        return;
      }
      render(r.body);
    });
  }

  if (!cap) {
    status.textContent = "This address has no tracking secret. Use the whole link you were given when you reported.";
    status.className = "refusal";
    return;
  }
  document.getElementById("answer-form").addEventListener("submit", function (e) {
    e.preventDefault();
    var form = e.target;
    var answer = form.elements.answer.value;
    var reason = form.elements.reason.value;
    var q = QUESTIONS[current.question];
    call("POST", "/desk/reports/" + encodeURIComponent(report) + "/" + q[1],
         { answer: answer, reason: reason || null, bug_id: current.bug_id,
           round: current.question === "reproduction" ? current.round : null }).then(function (r) {
      var out = document.getElementById("answer-status");
      if (!r.ok) {
        out.textContent = problem(r.body, "The answer could not be sent.");
        out.className = "refusal";
        return;
      }
      out.className = "";
      out.textContent = "Thank you: your answer was recorded.";
      form.reset();
      return load();
    });
  });
  load();
})();
