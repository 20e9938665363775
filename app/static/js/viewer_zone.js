// The browser's own time zone, so the schedule form can show occurrences in the viewer's time.
// Inline scripts are refused by the Content-Security-Policy, hence this file.
htmx.onLoad(function (content) {
  var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (!zone) {
    return;
  }
  var fields = Array.prototype.slice.call(content.querySelectorAll("input[data-viewer-zone]"));
  fields.forEach(function (field) {
    if (!field.value) {
      field.value = zone;
      htmx.trigger(field, "change");
    }
  });
});
