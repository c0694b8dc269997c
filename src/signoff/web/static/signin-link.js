// A one-time sign-in link carries its code in the fragment (never sent to a server or its logs):
// copy it into the form, and drop it from the address bar.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var code = window.location.hash.slice(1);
  if (!code) { return; }
  document.getElementById("code").value = code;
  history.replaceState(null, "", window.location.pathname);
});
