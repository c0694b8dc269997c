// Live case page: when the case gets a new version (in this server or another process), the
// server sends text for elements by id and a notice; both are set as text, never markup (an element
// sent empty text is hidden: a notice the new state made stale).
// Without this script the page is complete as served; reload to see a newer state.
"use strict";
(function () {
  var root = document.querySelector("[data-live]");
  var status = document.getElementById("live-status");
  if (!root || !status || !window.EventSource) { return; }
  var source = new EventSource(root.getAttribute("data-live"));
  source.addEventListener("changed", function (e) {
    var data = JSON.parse(e.data);
    Object.keys(data.fields || {}).forEach(function (id) {
      var node = document.getElementById(id);
      if (node) { node.textContent = data.fields[id]; node.hidden = data.fields[id] === ""; }
    });
    status.textContent = data.notice;
  });
})();
