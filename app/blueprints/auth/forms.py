from flask_wtf import FlaskForm
from wtforms import EmailField, PasswordField
from wtforms.validators import DataRequired, Length

from app.blueprints.form_validators import StorableText


class LoginForm(FlaskForm):
    email = EmailField("Email", validators=[DataRequired(), Length(max=254), StorableText()])
    password = PasswordField("Password", validators=[DataRequired(), Length(max=200), StorableText()])


class PasswordChangeForm(FlaskForm):
    current_password = PasswordField(
        "Current password",
        validators=[DataRequired("Enter your current password."), Length(max=200), StorableText()],
    )
    new_password = PasswordField(
        "New password", validators=[DataRequired("Enter a new password."), Length(max=200), StorableText()]
    )
    repeat_password = PasswordField(
        "New password again",
        validators=[DataRequired("Enter the new password a second time."), Length(max=200), StorableText()],
    )
