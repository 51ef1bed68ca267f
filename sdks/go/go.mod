module github.com/voice-agent-platform/sdk-go

go 1.19
