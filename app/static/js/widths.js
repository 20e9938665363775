// Widths the server computes (report columns, chart bars) arrive as data-width, a percentage.
// The Content-Security-Policy refuses style attributes, but not a width set through the DOM.
htmx.onLoad(function (content) {
  var sized = Array.prototype.slice.call(content.querySelectorAll("[data-width]"));
  if (content.matches("[data-width]")) {
    sized.push(content);
  }
  sized.forEach(function (element) {
    var percent = parseFloat(element.getAttribute("data-width"));
    if (isFinite(percent)) {
      element.style.width = Math.min(Math.max(percent, 0), 100) + "%";
    }
  });
});
