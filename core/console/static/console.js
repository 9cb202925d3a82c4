// The console's only script: the copy button beside a new secret, and a confirmation
// before a form marked data-confirm is sent. Without it every form still works.
"use strict";
document.addEventListener("click", function (ev) {
  var b = ev.target.closest("button[data-copy]");
  if (!b) return;
  var el = document.getElementById(b.getAttribute("data-copy"));
  var status = document.getElementById(b.getAttribute("aria-describedby"));
  var say = function (msg) { if (status) status.textContent = msg; };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(el.textContent.trim()).then(function () { say("Copied."); }, function () { select(el); say("Selected: press Ctrl+C (or ⌘C) to copy."); });
  } else {
    select(el);
    say("Selected: press Ctrl+C (or ⌘C) to copy.");
  }
});
function select(el) {
  var r = document.createRange();
  r.selectNodeContents(el);
  var s = window.getSelection();
  s.removeAllRanges();
  s.addRange(r);
}
document.addEventListener("submit", function (ev) {
  var f = ev.target;
  var msg = f.getAttribute("data-confirm");
  if (msg && !window.confirm(msg)) ev.preventDefault();
});
