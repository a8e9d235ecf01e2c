from django.contrib.auth import views as auth_views
from django.urls import path

from access import views

app_name = "access"

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("account/tokens", views.tokens, name="tokens"),
    path("account/tokens/<int:token_id>/revoke", views.token_revoke, name="token-revoke"),
]

urlpatterns += [
    path("projects/<uuid:project_id>/members/set", views.member_set, name="member-set"),
    path("projects/<uuid:project_id>/members/remove", views.member_remove, name="member-remove"),
]
