// "Copy" beside a value people paste elsewhere (a SHA-256 to check a download against): the
// button copies the text of the element its data-copy-target names and says so. Without script
// the buttons stay hidden and the value is selectable as it is.
(function () {
  function say(button, text) {
    var status = button.parentElement.querySelector(".copy-status");
    if (status !== null) {
      status.textContent = text;
    }
  }

  function copy(button) {
    var source = document.getElementById(button.getAttribute("data-copy-target"));
    if (source === null) {
      return;
    }
    var value = source.textContent.trim();
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(value).then(
        function () {
          say(button, "Copied.");
        },
        function () {
          selectText(source);
          say(button, "Selected: press Ctrl+C (⌘C) to copy.");
        }
      );
      return;
    }
    selectText(source);
    say(button, "Selected: press Ctrl+C (⌘C) to copy.");
  }

  function selectText(element) {
    var range = document.createRange();
    range.selectNodeContents(element);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  document.querySelectorAll("button[data-copy-target]").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () {
      copy(button);
    });
  });
})();
