from flask_wtf import FlaskForm
from wtforms import EmailField, PasswordField
from wtforms.validators import DataRequired, Length

from app.blueprints.form_validators import StorableText


class LoginForm(FlaskForm):
    email = EmailField("Email", validators=[DataRequired(), Length(max=254), StorableText()])
    password = PasswordField("Password", validators=[DataRequired(), Length(max=200), StorableText()])
