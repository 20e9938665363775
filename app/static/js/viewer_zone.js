// The browser's own time zone, so the schedule form can show occurrences in the viewer's time
// and a schedule's page its times in the viewer's zone (read from the `viewer_zone` cookie).
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
  rememberZone(zone, content);
});

var VIEWER_ZONE_COOKIE = "viewer_zone";

function cookieZone() {
  var found = document.cookie.split("; ").filter(function (pair) {
    return pair.indexOf(VIEWER_ZONE_COOKIE + "=") === 0;
  })[0];
  return found ? found.slice(VIEWER_ZONE_COOKIE.length + 1) : null;
}

// A page in another zone than the browser's was drawn before the server knew it: once the cookie
// holds the zone, the page is loaded again in it. The reload happens only when this call changed
// the cookie, so a zone the server does not know never reloads the page twice.
function rememberZone(zone, content) {
  if (cookieZone() === zone) {
    return;
  }
  // IANA names hold only letters, digits, "/", "_", "+" and "-": a cookie value as they are.
  document.cookie = VIEWER_ZONE_COOKIE + "=" + zone + "; path=/; max-age=31536000; SameSite=Lax";
  var shown = content.querySelector("[data-shown-zone]");
  if (shown && shown.dataset.shownZone !== zone && cookieZone() === zone) {
    window.location.reload();
  }
}
