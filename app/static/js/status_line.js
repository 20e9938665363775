// A page's status line (#status-line, role=status, outside the markup its polls redraw) says what
// changed, once. Each htmx update carries the sentence it would say in `data-status-line`; the line
// takes it only when it differs, so a poll that changed nothing announces nothing.
// When an update removed the control that had focus (a file's "Cancel file" once it settled, an
// export's "Cancel this export" once it started), focus goes to the line, which says what happened.
(function () {
  "use strict";
  let focusedBefore = null;

  document.addEventListener("htmx:beforeSwap", function () {
    focusedBefore = document.activeElement;
  });

  document.addEventListener("htmx:afterSettle", function () {
    const line = document.getElementById("status-line");
    if (line === null) return;
    const source = document.querySelector("[data-status-line]");
    if (source !== null && line.textContent !== source.dataset.statusLine) {
      line.textContent = source.dataset.statusLine;
    }
    const lost = focusedBefore !== null && focusedBefore !== document.body && !focusedBefore.isConnected;
    if (lost && (document.activeElement === null || document.activeElement === document.body)) {
      line.focus();
    }
    focusedBefore = null;
  });
})();
