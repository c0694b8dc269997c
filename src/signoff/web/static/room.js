// Live room: new messages arrive over server-sent events and are added as text (never markup).
// Without this script the page is complete as served; reload to see newer messages.
"use strict";
(function () {
  var list = document.getElementById("threads");
  if (!list || !list.getAttribute("data-live") || !window.EventSource) { return; }
  var status = document.getElementById("live-status");
  var kinds = { person: "person", agent: "agent" };

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  function render(m) {
    var kind = kinds[m.kind] || "system";
    var item = el("li", "message kind-" + kind);
    item.id = "m-" + m.id;
    var from = el("p", "from");
    from.appendChild(el("span", "badge kind", kind));
    from.appendChild(document.createTextNode(" "));
    var name = el("strong", "", m.sender_name);
    name.title = m.sender;
    from.appendChild(name);
    if (typeof m.timestamp === "number") {
      var at = el("time", "", "");
      at.setAttribute("datetime", new Date(m.timestamp).toISOString());
      at.setAttribute("data-precision", "second");
      from.appendChild(document.createTextNode(" \u00b7 "));
      from.appendChild(at);
      if (window.signoffTimes) { window.signoffTimes.localise(at); }
    }
    item.appendChild(from);
    if (m.summary) {  // a protocol message: its summary, the JSON folded (as the page renders it)
      item.appendChild(el("p", "body structured", m.summary));
      var raw = el("details", "raw");
      raw.appendChild(el("summary", "", "Raw JSON"));
      raw.appendChild(el("pre", "", m.raw));
      item.appendChild(raw);
    } else {
      item.appendChild(el("p", "body", m.body));
    }
    return item;
  }

  function add(m) {
    if (document.getElementById("m-" + m.id)) { return; }
    var root = m.thread_id || m.id;
    var thread = document.getElementById("t-" + root);
    if (!thread) {
      thread = el("li", "thread");
      thread.id = "t-" + root;
      thread.appendChild(el("ol", "messages"));
      list.appendChild(thread);
    }
    thread.querySelector("ol.messages").appendChild(render(m));
  }

  var source = new EventSource(list.getAttribute("data-live"));
  source.addEventListener("open", function () { status.textContent = "Live: new messages appear here."; });
  source.addEventListener("error", function () { status.textContent = "Reconnecting\u2026"; });
  source.addEventListener("message", function (e) { add(JSON.parse(e.data)); });
})();
