// Incident console: the timeline scrubber shows the run up to a step, P toggles presentation mode
// (arrow keys then step through the run), and a running incident's new messages arrive over
// server-sent events as text (never markup). Without this script the page is complete as served;
// the scrubber's button loads the chosen step.
"use strict";
(function () {
  var range = document.getElementById("at");
  var out = document.getElementById("at-out");
  var present = document.getElementById("present");

  function show(at) {
    var steps = document.querySelectorAll("[data-step]");
    for (var i = 0; i < steps.length; i++) {
      steps[i].hidden = Number(steps[i].getAttribute("data-step")) >= at;
    }
    if (out) { out.textContent = String(at); }
    var now = document.getElementById("now");
    var last = document.querySelector('#timeline li[data-step="' + String(at - 1) + '"]');
    if (now) {
      now.textContent = last ? last.querySelector(".stamp").textContent + " " +
        last.querySelector(".what").textContent : "Before the first step.";
    }
    var tallies = document.querySelectorAll(".tally");
    for (var j = 0; j < tallies.length; j++) {
      var section = tallies[j].closest("section");
      tallies[j].querySelector(".passed").textContent =
        String(section.querySelectorAll(".decision[data-allowed=yes]:not([hidden])").length);
      tallies[j].querySelector(".blocked").textContent =
        String(section.querySelectorAll(".decision[data-allowed=no]:not([hidden])").length);
    }
  }

  function step(by) {
    if (!range) { return; }
    var next = Math.min(Number(range.max), Math.max(0, Number(range.value) + by));
    range.value = String(next);
    show(next);
  }

  if (range) {
    range.addEventListener("input", function () { show(Number(range.value)); });
  }
  if (present) {
    present.hidden = false;
    var toggle = function () {
      var on = document.body.classList.toggle("presenting");
      present.setAttribute("aria-pressed", on ? "true" : "false");
    };
    present.addEventListener("click", toggle);
    document.addEventListener("keydown", function (e) {
      var typing = e.target && /^(INPUT|TEXTAREA|SELECT)$/.test(e.target.tagName) && e.target.type !== "range";
      if (typing || e.ctrlKey || e.metaKey || e.altKey) { return; }
      if (e.key === "p" || e.key === "P") { toggle(); e.preventDefault(); }
      else if (document.body.classList.contains("presenting") && e.target.type !== "range") {
        if (e.key === "ArrowRight") { step(1); e.preventDefault(); }
        if (e.key === "ArrowLeft") { step(-1); e.preventDefault(); }
      }
    });
  }

  var lanes = document.getElementById("lanes");
  var url = lanes && lanes.getAttribute("data-live");
  if (!url || !window.EventSource) { return; }
  var status = document.getElementById("live-status");

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  var source = new EventSource(url);
  source.addEventListener("open", function () { status.textContent = "Live: new messages appear in the lanes."; });
  source.addEventListener("error", function () { status.textContent = "Reconnecting\u2026"; });
  source.addEventListener("message", function (e) {
    var m = JSON.parse(e.data);
    var lane = document.getElementById("lane-" + m.lane);
    if (!lane || document.getElementById("m-" + m.id)) { return; }
    var item = el("li", "step live-new");
    item.id = "m-" + m.id;
    var from = el("p", "from");
    from.appendChild(el("span", "stamp", m.stamp));
    from.appendChild(document.createTextNode(" "));
    from.appendChild(el("strong", "", m.who));
    from.appendChild(document.createTextNode(" "));
    from.appendChild(el("span", "tag", m.control));
    item.appendChild(from);
    item.appendChild(el("p", "body", m.text));
    lane.appendChild(item);
  });
  source.addEventListener("done", function () {
    source.close();
    status.textContent = "The run finished: loading its replay\u2026";
    window.location.reload();
  });
})();
