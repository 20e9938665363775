from flask import flash, redirect, render_template, request, url_for
from flask_login import current_user, login_required, login_user, logout_user

from app.blueprints.auth import bp
from app.blueprints.auth.forms import LoginForm
from app.extensions import db, login_manager
from app.models import Person
from app.services.authentication import LoginThrottled, authenticate

login_manager.login_view = "auth.login"
login_manager.login_message = "Sign in to continue."


@login_manager.user_loader
def load_person(person_id: str) -> Person | None:
    return db.session.get(Person, int(person_id)) if person_id.isdigit() else None


@bp.route("/login", methods=["GET", "POST"])
def login():
    if current_user.is_authenticated:
        return redirect(url_for("workspace.home"))
    form = LoginForm()
    error = None
    status = 200
    if form.validate_on_submit():
        try:
            person = authenticate(form.email.data, form.password.data)
        except LoginThrottled as throttled:
            error, status = str(throttled), 429
        else:
            if person is not None:
                login_user(person)
                return redirect(_safe_next(request.args.get("next")) or url_for("workspace.home"))
            error, status = "That email and password do not match.", 401
    elif request.method == "POST":
        status = 400
    return render_template("auth/login.html", form=form, error=error), status


@bp.post("/logout")
@login_required
def logout():
    logout_user()
    flash("You are signed out.")
    return redirect(url_for("auth.login"))


def _safe_next(target: str | None) -> str | None:
    """Only same-site paths: never redirect to another host after sign-in."""
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return None
