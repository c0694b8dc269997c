// Times in the reader's own time zone: every page prints each time in UTC (to the minute or the
// second) with its exact value in <time datetime>; this rewrites the text, keeps the UTC text as
// the tooltip, and leaves the datetime attribute as it is. Without scripts the UTC text stays.
// Other scripts (room.js, for live messages) call window.signoffTimes.localise on the times they add.
"use strict";
(function () {
  var pad = function (n) { return (n < 10 ? "0" : "") + n; };
  var zone = "";
  try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { zone = ""; }

  function localise(el) {
    var d = new Date(el.getAttribute("datetime"));
    if (isNaN(d.getTime())) { return; }
    var text = d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " +
      pad(d.getHours()) + ":" + pad(d.getMinutes());
    if (el.getAttribute("data-precision") === "second") { text += ":" + pad(d.getSeconds()); }
    if (!el.title) { el.title = el.textContent || d.toISOString(); }
    el.textContent = zone ? text + " (" + zone + ")" : text;
  }

  window.signoffTimes = { localise: localise };
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("time[datetime]").forEach(localise);
  });
})();
