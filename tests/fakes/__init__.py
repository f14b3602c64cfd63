"""Real-HTTP stand-ins for the Slack Web API and an OpenAI-compatible model, on 127.0.0.1."""

from tests.fakes.model_api import FakeModel
from tests.fakes.slack_api import FakeSlack

__all__ = ["FakeModel", "FakeSlack"]
