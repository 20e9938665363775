from flask import flash, redirect, render_template, request, url_for
from flask_login import current_user, login_required, login_user, logout_user

from app.blueprints.auth import bp
from app.blueprints.auth.forms import LoginForm, PasswordChangeForm
from app.blueprints.auth.redirects import same_site_path
from app.blueprints.form_refusals import form_refusals
from app.domain.errors import ValidationError
from app.extensions import login_manager
from app.models import Person
from app.services.accounts.authentication import (
    LoginThrottled,
    authenticate,
    change_password,
    end_sessions,
    person_for_session,
)

login_manager.login_view = "auth.login"
login_manager.login_message = "Sign in to continue."


@login_manager.user_loader
def load_person(session_token: str) -> Person | None:
    return person_for_session(session_token)


@bp.route("/login", methods=["GET", "POST"])
def login():
    if current_user.is_authenticated:
        return redirect(url_for("workspace.home"))
    form = LoginForm()
    refused = None
    error: ValidationError | None = None
    status = 200
    if form.validate_on_submit():
        try:
            person = authenticate(form.email.data, form.password.data)
        except LoginThrottled as throttled:
            refused, status = str(throttled), 429
        else:
            if person is not None:
                login_user(person)
                return redirect(same_site_path(request.args.get("next")) or url_for("workspace.home"))
            # Beside the password: which of the two is wrong is not said, and the email is usually right.
            error, status = ValidationError("That email and password do not match.", "password"), 401
    elif request.method == "POST":
        error, status = form_refusals(form), 400
    return render_template("auth/login.html", form=form, refused=refused, error=error), status


@bp.post("/logout")
@login_required
def logout():
    end_sessions(current_user._get_current_object())
    logout_user()
    flash("You are signed out.")
    return redirect(url_for("auth.login"))


@bp.route("/account/password", methods=["GET", "POST"])
@login_required
def password():
    form = PasswordChangeForm()
    error: ValidationError | None = None
    status = 200
    if form.validate_on_submit():
        try:
            change_password(
                current_user._get_current_object(),
                form.current_password.data,
                form.new_password.data,
                form.repeat_password.data,
            )
        except LoginThrottled as throttled:
            error, status = ValidationError(str(throttled), "current_password"), 429
        except ValidationError as refused:
            error, status = refused, 400
        else:
            # The change ended every session, this one too; sign in again with the new token.
            login_user(current_user._get_current_object())
            flash("Your password is changed. Every other session is signed out.")
            return redirect(url_for("workspace.home"))
    elif request.method == "POST":
        error, status = form_refusals(form), 400
    return render_template("auth/password.html", form=form, error=error), status
