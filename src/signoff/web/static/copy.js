// The copy button of the tracking link: shown only where a script can copy.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var button = document.getElementById("copy-link");
  if (!button || !navigator.clipboard) { return; }
  button.hidden = false;
  button.addEventListener("click", function () {
    var value = document.getElementById(button.getAttribute("data-copy")).value;
    navigator.clipboard.writeText(value).then(function () {
      document.getElementById("copy-status").textContent = "Copied.";
    }, function () {
      document.getElementById("copy-status").textContent = "Could not copy: select the link and copy it.";
    });
  });
});
