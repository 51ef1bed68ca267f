package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	voiceagent "github.com/voice-agent-platform/sdk-go"
)

func main() {
	ctx := context.Background()
	baseURL := os.Getenv("VAP_BASE_URL")
	if baseURL == "" {
		baseURL = "http://localhost:3000"
	}

	// Log in (the SDK refreshes the access token by itself and tells the hook to save it)
	client := voiceagent.NewClient(baseURL,
		voiceagent.WithLogin(os.Getenv("VAP_EMAIL"), os.Getenv("VAP_PASSWORD")),
		voiceagent.WithTokenHook(func(voiceagent.Tokens) { fmt.Println("tokens refreshed") }),
	)

	// A webhook receiver's address, for the agent to send its call events to
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}

	// Create an agent
	agent, err := client.Agents.Create(ctx, voiceagent.CreateAgentParams{
		Name:         "Front desk",
		Prompt:       voiceagent.String("You are the receptionist of Acme."),
		FirstMessage: voiceagent.NullableOf("Hello, Acme here. How can I help?"),
		WebhookURL:   voiceagent.NullableOf("http://" + listener.Addr().String() + "/webhooks"),
	})
	if err != nil {
		log.Fatal(err)
	}

	// The receiver: every delivery is verified with the agent's secret before it is trusted
	ended := make(chan string, 1)
	go http.Serve(listener, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		event, err := client.Webhooks.Verify(body, r.Header, agent.WebhookSecret, voiceagent.VerifyOptions{})
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		if event.Type == "call.ended" {
			var data voiceagent.CallEndedData
			if json.Unmarshal(event.Data, &data) == nil {
				select {
				case ended <- data.Status:
				default: // a repeated delivery
				}
			}
		}
	}))

	// Place a sandbox call: the simulated callee says the script through real audio
	call, err := client.Calls.Create(ctx, voiceagent.CreateOutboundCallParams{
		AgentID: agent.ID,
		To:      "+15550100200",
		Simulation: &voiceagent.CreateOutboundCallParamsSimulation{
			CallerScript: []any{"Hi, what are your opening hours?", "Thanks, goodbye!"},
		},
	})
	if err != nil {
		log.Fatal(err)
	}

	// Wait for it to end, then stream its MP3 into a file
	done, err := client.Calls.WaitUntilEnded(ctx, call.ID, voiceagent.WaitOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("call %s after %d s\n", done.Status, done.DurationSeconds)
	recording, err := client.Calls.DownloadRecording(ctx, call.ID, voiceagent.WaitOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer recording.Close()
	file, err := os.Create("call.mp3")
	if err != nil {
		log.Fatal(err)
	}
	defer file.Close()
	saved, err := io.Copy(file, recording)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("recording saved: %d bytes\n", saved)

	// The signed call.ended webhook arrived and verified
	select {
	case status := <-ended:
		fmt.Printf("verified webhook call.ended: %s\n", status)
	case <-time.After(60 * time.Second):
		log.Fatal("no verified call.ended webhook")
	}
}
