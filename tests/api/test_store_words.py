"""The editable long-term store is worded "editable" for people; its value stays `working`."""


def test_the_store_is_described_as_editable_and_its_value_kept(api):
    listed = {tool["function"]["name"]: tool for tool in api.call("get", "tools/").json()["tools"]}
    create = listed["create_record"]["function"]["parameters"]["properties"]
    assert create["store"]["enum"][0] == "working"
    assert "editable" in create["store"]["description"]
    assert "editable (value 'working')" in create["surface"]["description"]
    memories = api.call("get", "memories/?store=working")
    assert memories.status_code == 200
